import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startGateway, type Caller, type TestGateway } from "../helpers/gateway.js";
import { fewestStatements, type Admin, type Member } from "../helpers/fixtures.js";

/**
 * Organization → sites → sections → site spaces → space must cost the same number of SQL
 * statements whatever the number of rows: relations are preloaded or batched, and the computed
 * fields (defaults, counts, URLs, titles, space permissions) go through per-request DataLoaders.
 */
vi.setConfig({ testTimeout: 240_000, hookTimeout: 300_000 });

let t: TestGateway;
let admin: Admin;
let editor: Member;
let big: string;
let small: string;

/** Connections all the way down: Organization → sites → sections → site spaces → space. */
const QUERY = /* GraphQL */ `
  query Sites($org: String!, $sites: Int = 20, $sections: Int = 20, $variants: Int = 2, $groups: Int = 1) {
    organization(organizationId: $org) {
      id
      subdomain { subdomain isActive }
      sites(first: $sites) {
        totalCount
        edges {
          node {
            id object type title visibility published siteSpacesCount createdAt agentsContext
            adaptiveContent { enabled }
            urls { location app published }
            proxy { origin target }
            subdomain { subdomain }
            sectionGroups(first: $groups) { totalCount edges { node { id title } } }
            sections(first: $sections) {
              totalCount
              edges {
                node {
                  id object title path default condition group { id } icon
                  urls { published }
                  siteSpaces(first: $variants) {
                    totalCount
                    edges {
                      node {
                        id path section { id } title default condition hasAdvancedCustomizationFeature
                        urls { published }
                        space { id title visibility }
                      }
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
`;

/** The `nodes` shortcut of connections: a section's siteSpaces, a group's sections; and a site's features (a plain list). */
const LIST_QUERY = /* GraphQL */ `
  query SiteLists($org: String!, $sites: Int = 20, $sections: Int = 20) {
    organization(organizationId: $org) {
      sites(first: $sites) {
        edges {
          node {
            id
            features { id }
            sectionGroups(first: 1) { edges { node { sections(first: 10) { nodes { id } } } } }
            sections(first: $sections) { edges { node { siteSpaces(first: 2) { nodes { default space { permissions { admin } } } } } } }
          }
        }
      }
    }
  }
`;

/** Seeds `sites` sites × `sections` sections × 2 site spaces with a handful of statements. */
async function seed(organizationId: string, label: string, sites: number, sections: number) {
  const prisma = t.gateway.db.prisma;
  const spaces = Array.from({ length: 4 }, (_, i) => ({
    id: `spc_${label}_${i}`,
    organizationId,
    title: `Space ${label} ${i}`,
    position: i,
  }));
  await prisma.space.createMany({ data: spaces });
  const siteRows = Array.from({ length: sites }, (_, s) => ({
    id: `site_${label}_${s}`,
    organizationId,
    title: `Site ${s}`,
    type: s % 3 === 0 ? "ultimate" : "basic",
    published: s % 2 === 0,
    adaptiveEnabled: s % 4 === 0,
    proxy: s % 5 === 0 ? `proxy${s}.example.com/docs` : null,
    defaultSectionId: `sitesc_${label}_${s}_0`,
    createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, s)),
  }));
  await prisma.site.createMany({ data: siteRows });
  await prisma.siteSectionGroup.createMany({
    data: siteRows.map((site) => ({ id: `sitesg_${site.id}`, siteId: site.id, title: "Group", position: 0.5 })),
  });
  const sectionRows = siteRows.flatMap((site, s) =>
    Array.from({ length: sections }, (_, c) => ({
      id: `sitesc_${label}_${s}_${c}`,
      siteId: site.id,
      title: `Section ${c}`,
      path: `section-${c}`,
      position: c,
      groupId: c % 4 === 1 ? `sitesg_${site.id}` : null,
      condition: c % 3 === 0 ? "visitor.claims.beta === true" : null,
      defaultSiteSpaceId: `sitesp_${label}_${s}_${c}_1`,
    })),
  );
  await prisma.siteSection.createMany({ data: sectionRows });
  await prisma.siteSpace.createMany({
    data: sectionRows.flatMap((section) =>
      [0, 1].map((k) => ({
        id: `${section.id.replace("sitesc_", "sitesp_")}_${k}`,
        siteId: section.siteId,
        sectionId: section.id,
        spaceId: spaces[(section.position + k) % spaces.length]!.id,
        path: `space-${k}`,
        position: k,
      })),
    ),
  });
}

/**
 * Statements of one run of the query. Background work of the gateway (event delivery polling)
 * may add a statement during a run, never remove one: the fewest of five runs is the query's.
 */
async function measure(caller: Caller, organizationId: string, query = QUERY) {
  const { count, result } = await fewestStatements(
    t,
    async () => {
      const res = await caller.graphql(query, { org: organizationId });
      expect(res.errors).toBeUndefined();
      return res;
    },
    5,
  );
  return { statements: count, data: result.data };
}

beforeAll(async () => {
  // Event delivery polls the database every second by default: not during these measurements.
  const quiet: Record<string, number> = { integrationDispatchPollMs: 3_600_000 };
  t = await startGateway(quiet);
  admin = await t.bootstrap("ada@acme.test", "Big Org");
  big = admin.organization;
  small = (await t.bootstrap("ada@acme.test", "Small Org")).organization;
  editor = await t.member(big, "eddie@acme.test", "edit");
  await t.member(small, "eddie@acme.test", "edit");
  await admin.patch(`/v1/orgs/${big}`, { hostname: "bigorg" });
  await seed(big, "big", 20, 20);
  await seed(small, "small", 5, 5);
  // Warm up: the first use of a token records its last use, which must not fall in a measurement.
  for (const caller of [admin, editor]) await caller.graphql(`{ organizations { count } }`);
  await new Promise((r) => setTimeout(r, 200));
});
afterAll(() => t?.close());

describe("sites batching", () => {
  for (const who of ["editor", "admin"] as const) {
    it(`Organization → 20 sites → 20 sections → site spaces → space costs as many statements as 5 × 5 (${who})`, async () => {
      const caller = who === "editor" ? editor : admin;
      const large = await measure(caller, big);
      const little = await measure(caller, small);
      console.log(`[sites-batching] ${who}: 20×20 rows → ${large.statements} statements; 5×5 rows → ${little.statements} statements`);

      const sites = large.data.organization.sites;
      expect(sites.totalCount).toBe(20);
      expect(sites.edges).toHaveLength(20);
      const sections = sites.edges.flatMap((e: any) => e.node.sections.edges.map((x: any) => x.node));
      expect(sections).toHaveLength(400);
      const siteSpaces = sections.flatMap((s: any) => s.siteSpaces.edges.map((e: any) => e.node));
      expect(siteSpaces).toHaveLength(800);
      expect(sections.every((s: any) => s.siteSpaces.totalCount === 2)).toBe(true);
      expect(sites.edges.every((e: any) => e.node.sections.totalCount === 20 && e.node.siteSpacesCount === 40)).toBe(true);
      // Computed per row: defaults, titles, URLs, groups, permissions.
      const first = sites.edges[0].node;
      expect(first).toMatchObject({
        type: "ultimate",
        published: true,
        subdomain: { subdomain: "bigorg" },
        proxy: { origin: "proxy0.example.com/docs" },
      });
      expect(first.sectionGroups.totalCount).toBe(1);
      expect(first.sections.edges[0].node).toMatchObject({
        default: true,
        condition: "visitor.claims.beta === true",
        // The default section sits at the site's base (GitBook's convention).
        urls: { published: "https://proxy0.example.com/docs" },
      });
      expect(first.sections.edges[1].node.default).toBe(false);
      expect(first.sections.edges[1].node.group.id).toBe(`sitesg_${first.id}`);
      expect(sections.every((s: any) => s.siteSpaces.edges.map((e: any) => e.node.default).join() === "false,true")).toBe(true);
      // A section's default site space sits at the section's URL; the others under their path.
      expect(
        siteSpaces.every((s: any) => s.title === s.space.title && s.section && (s.default || s.urls.published.endsWith(`/${s.path}`))),
      ).toBe(true);
      expect(first.sections.edges[0].node.siteSpaces.edges[0].node.hasAdvancedCustomizationFeature).toBe(true);
      expect(little.data.organization.sites.edges.flatMap((e: any) => e.node.sections.edges)).toHaveLength(25);

      const largeLists = await measure(caller, big, LIST_QUERY);
      const littleLists = await measure(caller, small, LIST_QUERY);
      console.log(
        `[sites-batching] ${who} (nodes): 20×20 rows → ${largeLists.statements} statements; 5×5 rows → ${littleLists.statements} statements`,
      );
      const listed = largeLists.data.organization.sites.edges.flatMap((e: any) => e.node.sections.edges.map((x: any) => x.node));
      expect(listed).toHaveLength(400);
      expect(
        listed.every((s: any) => s.siteSpaces.nodes.length === 2 && !s.siteSpaces.nodes[0].default && s.siteSpaces.nodes[1].default),
      ).toBe(true);
      const listedSpaces = listed.flatMap((s: any) => s.siteSpaces.nodes.map((x: any) => x.space));
      expect(listedSpaces.every((x: any) => x.permissions.admin === (who === "admin"))).toBe(true);
      expect(largeLists.data.organization.sites.edges[0].node.sectionGroups.edges[0].node.sections.nodes).toHaveLength(5);
      expect(largeLists.data.organization.sites.edges[0].node.features.map((f: any) => f.id)).toEqual([
        "sites-adaptive-content",
        "sites-proxy",
      ]);
      expect(largeLists.statements).toBe(littleLists.statements);

      expect(large.statements).toBe(little.statements);
    });
  }
});
