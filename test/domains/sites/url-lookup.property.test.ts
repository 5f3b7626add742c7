import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startGateway, type TestGateway } from "../../helpers/gateway.js";
import { acmeDocs } from "../../helpers/fixtures.js";
import { site, sitePath, space, type Admin } from "./helpers.js";

/**
 * For random site structures and visibilities: every `urls.published` of the published structure
 * resolves (POST /v1/urls/published) to the item it links, a page path below it stays below it,
 * and what the structure hides from the visitor resolves to none of the hidden items.
 */

vi.setConfig({ testTimeout: 600_000, hookTimeout: 300_000 });

let t: TestGateway;
let admin: Admin;
let org: string;
const pool: string[] = [];

const SCHEMA = {
  type: "object",
  properties: { unsigned: { type: "object", properties: { beta: { type: "boolean" } } } },
  additionalProperties: false,
};
const HIDDEN = "visitor.claims.unsigned.beta === true";

beforeAll(async () => {
  t = await startGateway({ sitesDomain: "docs.test" });
  ({ admin, org } = await acmeDocs(t));
  expect((await admin.patch(`/v1/orgs/${org}`, { hostname: "acme" })).status).toBe(200);
  for (const title of ["One", "Two", "Three"]) pool.push(await space(admin, org, title));
});
afterAll(() => t?.close());

async function lookup(url: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${t.url}/v1/urls/published`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ url }),
  });
  const body = await res.json();
  t.openapi.check("POST", "/v1/urls/published", res.status, body, JSON.stringify(body));
  return { status: res.status, body };
}

const level = fc.record({
  items: fc.array(fc.record({ hidden: fc.boolean() }), { minLength: 1, maxLength: 3 }),
  defaultIndex: fc.nat(2),
});
const structure = fc.record({
  sections: fc.array(fc.record({ hidden: fc.boolean(), variants: level }), { minLength: 0, maxLength: 3 }),
  root: level,
  defaultSection: fc.nat(2),
  shareLink: fc.boolean(),
  host: fc.constantFrom("subdomain", "sites", "hostname"),
});

let run = 0;

describe("published URLs resolve back to what they link", () => {
  it("for random structures and visibilities", async () => {
    await fc.assert(
      fc.asyncProperty(structure, async (shape) => {
        run++;
        const s = await site(admin, org, { title: `Prop ${run}` });
        const p = (suffix = "") => sitePath(org, s.id, suffix);
        await admin.put(p("/adaptive-schema"), { jsonSchema: SCHEMA });
        if (shape.host === "hostname") await admin.patch(p(), { hostname: `docs${run}.acme.example.com` });
        else await admin.patch(p(), { basename: `prop-${run}` });

        const addLevel = async (lv: typeof shape.root, sectionId: string | null, first?: string) => {
          const ids: string[] = first ? [first] : [];
          for (let i = ids.length; i < lv.items.length; i++) {
            const made = await admin.post(p("/site-spaces"), { spaceId: pool[i % pool.length], ...(sectionId ? { sectionId } : {}) });
            expect(made.status).toBe(201);
            ids.push(made.body.id);
          }
          for (const [i, item] of lv.items.entries())
            if (item.hidden) await admin.patch(p(`/site-spaces/${ids[i]}`), { condition: HIDDEN });
          const chosen = ids[lv.defaultIndex % ids.length]!;
          if (sectionId) await admin.patch(p(`/sections/${sectionId}`), { defaultSiteSpace: chosen });
          else await admin.patch(p(), { defaultSiteSpace: chosen });
        };
        if (shape.sections.length === 0) await addLevel(shape.root, null);
        else {
          const sectionIds: string[] = [];
          for (const [i, section] of shape.sections.entries()) {
            const made = await admin.post(p("/sections"), { spaceId: pool[0], title: `Section ${i + 1}` });
            expect(made.status).toBe(201);
            sectionIds.push(made.body.id);
            if (section.hidden) await admin.patch(p(`/sections/${made.body.id}`), { condition: HIDDEN });
            await addLevel(section.variants, made.body.id, made.body.siteSpaces[0].id);
          }
          await admin.patch(p(), { defaultSiteSection: sectionIds[shape.defaultSection % sectionIds.length] });
        }
        let shareKey: string | undefined;
        if (shape.shareLink) {
          await admin.patch(p(), { visibility: "share-link" });
          shareKey = (await admin.post(p("/share-links"), {})).body.key;
        }
        expect((await admin.post(p("/publish"))).status).toBe(200);

        const published = await t.caller("").get(p("/published"), shareKey ? { shareKey } : {});
        expect(published.status).toBe(200);
        // The same site under PUBLIC_URL's /sites/<organization hostname>/<basename> form.
        const form = (url: string) => (shape.host === "sites" ? url.replace("https://acme.docs.test/", `${t.url}/sites/acme/`) : url);
        const visible: { id: string; section: string | null; url: string }[] = [];
        for (const item of published.body.structure.structure) {
          if (item.object === "site-space") visible.push({ id: item.id, section: null, url: form(item.urls.published) });
          else for (const v of item.siteSpaces) visible.push({ id: v.id, section: item.id, url: form(v.urls.published) });
        }
        for (const item of visible) {
          const at = await lookup(item.url);
          expect(at.status, item.url).toBe(200);
          expect(at.body.siteSpace, item.url).toBe(item.id);
          expect(at.body.siteSection ?? null, item.url).toBe(item.section);
          expect(at.body.pathname).toBe("");
          expect(at.body.shareKey ?? undefined).toBe(shareKey);
          const below = await lookup(`${item.url}/zz-page/deeper`);
          expect(below.body).toMatchObject({ siteSpace: item.id, pathname: "zz-page/deeper", complete: true });
          expect(below.body.basePath).toBe(at.body.basePath);
        }
        if (shareKey && visible.length) {
          // Without the key, nothing of a share-link site resolves.
          const bare = visible[0]!.url.replace(`/${shareKey}`, "");
          expect((await lookup(bare)).status).toBe(404);
        }
        // A site showing the visitor nothing resolves to nothing.
        if (!visible.length) {
          const base = form(published.body.site.urls.published);
          expect((await lookup(shareKey ? `${base}/${shareKey}` : base)).status).toBe(404);
        }
        // What the structure hides resolves to none of the hidden items.
        const shown = new Set(visible.map((v) => v.id));
        const all = (await admin.get(p("/site-spaces"), shareKey ? { shareKey } : {})).body.items as any[];
        for (const hidden of all.filter((x) => !shown.has(x.id))) {
          const at = await lookup(form(hidden.urls.published));
          if (at.status === 200) expect(shown.has(at.body.siteSpace), hidden.urls.published).toBe(true);
          else expect(at.status).toBe(404);
        }
        await admin.delete(p());
      }),
      { numRuns: 10 },
    );
  });
});
