import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startGateway, type TestGateway } from "../helpers/gateway.js";
import { collect, wsClient } from "../helpers/graphql-ws.js";
import { GRAPH_LIMITS } from "../../src/graphql/limits.js";
import type { Client } from "graphql-ws";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 180_000 });

let t: TestGateway;
let admin: Awaited<ReturnType<TestGateway["bootstrap"]>>;

beforeAll(async () => {
  t = await startGateway();
  admin = await t.bootstrap("ada@acme.test", "Acme");
  await admin.post("/v1/integrations/live", { title: "Live", organization: admin.organization });
});
afterAll(() => t?.close());

/** Runs one query on `client`: its result, or the errors of an `error` message. */
function once(client: Client, query: string, variables: Record<string, unknown> = {}): Promise<{ result?: any; errors?: any[] }> {
  return new Promise((resolve) => {
    let result: any;
    client.subscribe(
      { query, variables },
      {
        next: (value) => (result = value),
        error: (errors) => resolve({ errors: errors as any[] }),
        complete: () => resolve({ result }),
      },
    );
  });
}

describe("graphql-ws: one failing operation fails alone", () => {
  it("answers an error message for a document over a limit, a syntax error or an invalid one; the socket and its subscription stay open", async () => {
    const client = wsClient(t.url, admin.token);
    const closed: number[] = [];
    client.on("closed", (event: any) => closed.push(event?.code));
    const sub = collect(client, `subscription { integrationEvents(integrationName: "live") { id payload { type } } }`, {}, 1);
    await sub.ready;

    let deep = "name";
    for (let i = 0; i < 14; i++) deep = `ofType { ${deep} }`;
    const tokens = `{ ${Array.from({ length: GRAPH_LIMITS.tokens + 1 }, () => "__typename").join(" ")} }`;
    const aliases = `{ ${Array.from({ length: GRAPH_LIMITS.aliases + 1 }, (_, i) => `a${i}: organizations { count }`).join(" ")} }`;
    const cases: [string, (errors: any[]) => void][] = [
      [
        `{ __type(name: "Organization") { fields { type { ${deep} } } } }`,
        (e) => expect(e[0].extensions).toMatchObject({ code: "GRAPHQL_VALIDATION_FAILED", limit: "depth" }),
      ],
      [tokens, (e) => expect(e[0].extensions).toMatchObject({ code: "GRAPHQL_VALIDATION_FAILED", limit: "tokens" })],
      [aliases, (e) => expect(e[0].extensions).toMatchObject({ limit: "aliases", max: GRAPH_LIMITS.aliases })],
      [`{ organizations { `, (e) => expect(e[0].message).toMatch(/Syntax Error/)],
      [`{ nothingHere }`, (e) => expect(e[0].message).toMatch(/nothingHere/)],
    ];
    for (const [query, check] of cases) {
      const outcome = await once(client, query);
      expect(outcome.errors, query.slice(0, 80)).toBeDefined();
      check(outcome.errors!);
      expect(JSON.stringify(outcome.errors)).not.toContain('"http"');
    }

    // The same socket still answers queries…
    const ok = await once(client, `{ organizations { count } }`);
    expect(ok.result.data.organizations.count).toBe(1);
    expect(closed).toEqual([]);
    // …and the subscription opened before the failures still receives its events.
    await admin.post("/v1/integrations/live/installations", { organization: admin.organization });
    const [event] = await sub.results;
    expect(event.data.integrationEvents.payload.type).toBe("installation_setup");
    // Once its last subscription is done, the lazy client closes the socket itself (1000), maybe
    // before the write's answer arrived: nothing else closed it.
    expect(closed.filter((code) => code !== 1000)).toEqual([]);
    await client.dispose();
  });
});
