import { describe, expect, it } from "vitest";
import { lazy } from "../../src/core/support/lazy.js";

describe("lazy (modules loaded by their first use: PDF, SAML, OpenAPI validation, undici, language tags)", () => {
  it("loads once for the uses that arrive together, then answers from what it loaded", async () => {
    let loads = 0;
    const value = lazy(async () => {
      loads++;
      await new Promise((resolve) => setTimeout(resolve, 10));
      return { loaded: loads };
    });
    expect(loads).toBe(0); // nothing is loaded before the first use
    const first = await Promise.all(Array.from({ length: 5 }, () => value()));
    expect(loads).toBe(1);
    for (const v of first) expect(v).toBe(first[0]);
    expect(await value()).toBe(first[0]);
    expect(loads).toBe(1);
  });

  it("does not keep a failed load: every use waiting for it gets the failure, the next use loads again", async () => {
    let loads = 0;
    let fail = true;
    const value = lazy(async () => {
      loads++;
      await new Promise((resolve) => setTimeout(resolve, 10));
      if (fail) throw new Error("not there");
      return "loaded";
    });
    const failed = await Promise.allSettled(Array.from({ length: 3 }, () => value()));
    expect(failed.map((r) => r.status)).toEqual(["rejected", "rejected", "rejected"]);
    expect(loads).toBe(1);
    fail = false;
    expect(await value()).toBe("loaded");
    expect(await value()).toBe("loaded");
    expect(loads).toBe(2);
  });

  it("imports a real module on first use", async () => {
    const tags = lazy(async () => (await import("language-tags")).default);
    const t = (await tags())("en-us");
    expect(t.valid()).toBe(true);
    expect(t.format()).toBe("en-US");
  });
});
