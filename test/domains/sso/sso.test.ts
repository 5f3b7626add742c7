import zlib from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../../helpers/gateway.js";
import { acmeDocs, expectIsoDate, type Admin, type Member } from "../../helpers/fixtures.js";
import { b64, makeIdp, postToAcs, responseXml, sign, type ResponseOptions, type TestIdp } from "./saml-idp.js";

let t: TestGateway;
let admin: Admin;
let other: Admin;
let reader: Member;
let idp: TestIdp;
let attacker: TestIdp;
let teamId: string;
let otherTeamId: string;

const IDP_ENTITY = "https://idp.acme.test/metadata";
const IDP_SSO = "https://idp.acme.test/sso/saml";
const base = () => `/v1/orgs/${admin.organization}/saml`;

beforeAll(async () => {
  idp = makeIdp("idp.acme.test");
  attacker = makeIdp("evil.test");
  t = await startGateway();
  ({ admin, other, reader } = await acmeDocs(t, { reader: ["rita@acme.test", "read"] }));
  const prisma = t.gateway.db.prisma;
  teamId = (await prisma.team.create({ data: { id: "team_engineering1", organizationId: admin.organization, title: "Engineering" } })).id;
  otherTeamId = (await prisma.team.create({ data: { id: "team_theirs1", organizationId: other.organization, title: "Theirs" } })).id;
}, 120_000);
afterAll(() => t?.close());

describe("SAML providers: create, read, change, delete", () => {
  let providerId: string;

  it("POST creates a provider (201) with every documented field", async () => {
    const res = await admin.post(base(), {
      label: "Acme IdP",
      entityID: IDP_ENTITY,
      certificate: idp.cert,
      ssoURL: IDP_SSO,
      defaultTeam: teamId,
      defaultRole: "edit",
    });
    expect(res.status).toBe(201);
    const p = res.body;
    providerId = p.id;
    expect(p.id).toMatch(/^saml_/);
    expect(Object.keys(p).sort()).toEqual(
      [
        "certificate",
        "createdAt",
        "defaultRole",
        "defaultTeam",
        "entityID",
        "id",
        "label",
        "object",
        "service",
        "ssoURL",
        "status",
        "urls",
      ].sort(),
    );
    expect(p).toMatchObject({
      object: "saml-provider",
      label: "Acme IdP",
      entityID: IDP_ENTITY,
      certificate: idp.cert,
      ssoURL: IDP_SSO,
      defaultRole: "edit",
      status: "active",
      service: {
        acsURL: `${t.url}/sso/saml/${p.id}/acs`,
        startURL: `${t.url}/sso/saml/${p.id}/start`,
        entityID: `${t.url}/sso/saml/${p.id}/metadata`,
      },
      urls: { location: `${t.url}${base()}/${p.id}` },
    });
    expectIsoDate(p.createdAt);
    expect(p.defaultTeam).toEqual({
      object: "team",
      id: teamId,
      title: "Engineering",
      members: 0,
      spaces: 0,
      createdAt: expect.any(String),
      permissions: { admin: true, view: true },
    });
  });

  it("takes a label alone: the other fields are absent and defaultRole is null", async () => {
    const res = await admin.post(base(), { label: "x".repeat(30) });
    expect(res.status).toBe(201);
    expect(res.body.defaultRole).toBeNull();
    for (const field of ["entityID", "certificate", "ssoURL", "defaultTeam"]) expect(res.body).not.toHaveProperty(field);
    const explicitNull = await admin.post(base(), { label: "Null role", defaultRole: null, defaultTeam: null });
    expect(explicitNull.status).toBe(201);
    expect(explicitNull.body.defaultRole).toBeNull();
    await admin.delete(`${base()}/${explicitNull.body.id}`);
  });

  it("rejects bad input with a 400 naming the field (each limit one past its edge)", async () => {
    const cases: [unknown, string][] = [
      [{}, "label"],
      [{ label: "" }, "label"],
      [{ label: "   " }, "label"],
      [{ label: null }, "label"],
      [{ label: "x".repeat(31) }, "label"],
      [{ label: "ok", entityID: "e".repeat(1025) }, "entityID"],
      [{ label: "ok", entityID: "" }, "entityID"],
      [{ label: "ok", certificate: "c".repeat(10001) }, "certificate"],
      [{ label: "ok", certificate: "not a certificate" }, "certificate"],
      [{ label: "ok", certificate: "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----" }, "certificate"],
      [{ label: "ok", certificate: idp.key }, "certificate"],
      [{ label: "ok", ssoURL: "not a url" }, "ssoURL"],
      [{ label: "ok", ssoURL: "https://idp.test/" + "s".repeat(2049 - 17) }, "ssoURL"],
      [{ label: "ok", defaultTeam: "team_missing" }, "defaultTeam"],
      [{ label: "ok", defaultTeam: otherTeamId }, "defaultTeam"],
      [{ label: "ok", defaultRole: "owner" }, "defaultRole"],
      [{ label: "ok", defaultRole: 3 }, "defaultRole"],
      [{ label: "ok", colour: "red" }, "colour"],
    ];
    for (const [body, field] of cases) {
      const res = await admin.post(base(), body);
      expect(res.status, JSON.stringify(body).slice(0, 120)).toBe(400);
      expect(res.body.error.message, JSON.stringify(body).slice(0, 120)).toContain(field);
    }
    // Exactly at each limit is fine (the certificate padded with whitespace to 10000 characters).
    const edge = await admin.post(base(), {
      label: "y".repeat(30),
      entityID: "e".repeat(1024),
      ssoURL: "https://idp.test/" + "s".repeat(2048 - 17),
      certificate: idp.cert + "\n".repeat(10000 - idp.cert.length),
    });
    expect(edge.status).toBe(201);
    expect(edge.body.ssoURL).toHaveLength(2048);
    await admin.delete(`${base()}/${edge.body.id}`);
  });

  it("GET reads one and lists all (paginated, oldest first)", async () => {
    const one = await admin.get(`${base()}/${providerId}`);
    expect(one.status).toBe(200);
    expect(one.body.id).toBe(providerId);
    expect(one.body.defaultTeam.id).toBe(teamId);
    const list = await admin.get(base());
    expect(list.status).toBe(200);
    expect(list.body.count).toBe(2);
    expect(list.body.items.map((p: any) => p.id)[0]).toBe(providerId);
    const page = await admin.get(base(), { limit: 1 });
    expect(page.body.items).toHaveLength(1);
    const next = await admin.get(base(), { limit: 1, page: page.body.next.page });
    expect(next.body.items[0].label).toBe("x".repeat(30));
    expect((await admin.get(base(), { limit: 1001 })).body.error.message).toContain("limit");
    expect((await admin.get(`${base()}/saml_missing`)).status).toBe(404);
  });

  it("PATCH changes the given fields; null clears the optional ones", async () => {
    const second = (await admin.get(base())).body.items[1].id;
    const res = await admin.patch(`${base()}/${second}`, {
      label: "Second",
      ssoURL: IDP_SSO,
      entityID: "urn:idp",
      certificate: idp.cert,
      defaultRole: "read",
      defaultTeam: teamId,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      label: "Second",
      ssoURL: IDP_SSO,
      entityID: "urn:idp",
      defaultRole: "read",
      defaultTeam: { id: teamId },
    });
    const cleared = await admin.patch(`${base()}/${second}`, {
      ssoURL: null,
      entityID: null,
      certificate: null,
      defaultRole: null,
      defaultTeam: null,
    });
    expect(cleared.status).toBe(200);
    expect(cleared.body.label).toBe("Second");
    expect(cleared.body.defaultRole).toBeNull();
    for (const field of ["entityID", "certificate", "ssoURL", "defaultTeam"]) expect(cleared.body).not.toHaveProperty(field);
    expect((await admin.patch(`${base()}/${second}`, {})).body.label).toBe("Second");
    for (const [body, field] of [
      [{ label: null }, "label"],
      [{ label: "" }, "label"],
      [{ label: "z".repeat(31) }, "label"],
      [{ entityID: "e".repeat(1025) }, "entityID"],
      [{ certificate: "c".repeat(10001) }, "certificate"],
      [{ certificate: "garbage" }, "certificate"],
      [{ ssoURL: "ftp://x.test/" }, "ssoURL"],
      [{ defaultTeam: otherTeamId }, "defaultTeam"],
      [{ defaultRole: "boss" }, "defaultRole"],
    ] as [unknown, string][]) {
      const bad = await admin.patch(`${base()}/${second}`, body);
      expect(bad.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(bad.body.error.message).toContain(field);
    }
    expect((await admin.patch(`${base()}/saml_missing`, { label: "x" })).status).toBe(404);
  });

  it("is for admins only: 403 for other members, 404 for strangers, 401 without a token", async () => {
    const anon = t.caller("");
    const one = `${base()}/${providerId}`;
    for (const res of [
      await reader.get(base()),
      await reader.get(one),
      await reader.post(base(), { label: "mine" }),
      await reader.patch(one, { label: "mine" }),
      await reader.delete(one),
    ]) {
      expect(res.status).toBe(403);
      expect(res.body.error.message).toContain("admin");
    }
    for (const res of [
      await other.get(base()),
      await other.get(one),
      await other.post(base(), { label: "mine" }),
      await other.patch(one, { label: "mine" }),
      await other.delete(one),
      await other.get(`/v1/orgs/${admin.organization}/sso`),
    ]) {
      expect(res.status).toBe(404);
      expect(res.body.error.message).toContain(admin.organization);
    }
    for (const res of [
      await anon.get(base()),
      await anon.get(one),
      await anon.post(base(), { label: "mine" }),
      await anon.patch(one, { label: "mine" }),
      await anon.delete(one),
      await anon.get(`/v1/orgs/${admin.organization}/sso`),
    ]) {
      expect(res.status).toBe(401);
    }
    // Another organization's provider is not reachable through this organization.
    const theirs = (await other.post(`/v1/orgs/${other.organization}/saml`, { label: "Theirs" })).body;
    expect((await admin.get(`${base()}/${theirs.id}`)).status).toBe(404);
    expect((await admin.delete(`${base()}/${theirs.id}`)).status).toBe(204);
    expect((await other.get(`/v1/orgs/${other.organization}/saml/${theirs.id}`)).status).toBe(200);
  });

  it("GET /sso lists how to sign in, to every member, not paginated", async () => {
    const res = await reader.get(`/v1/orgs/${admin.organization}/sso`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(["items"]);
    expect(res.body.items).toHaveLength(2);
    expect(res.body.items[0]).toEqual({ id: providerId, label: "Acme IdP", startURL: `${t.url}/sso/saml/${providerId}/start` });
  });

  it("DELETE answers 204 empty whether or not the provider existed", async () => {
    const doomed = (await admin.post(base(), { label: "Doomed" })).body.id;
    const res = await admin.delete(`${base()}/${doomed}`);
    expect(res.status).toBe(204);
    expect(res.body).toBeUndefined();
    expect((await admin.get(`${base()}/${doomed}`)).status).toBe(404);
    expect((await admin.delete(`${base()}/${doomed}`)).status).toBe(204);
  });

  it("GraphQL: samlProviders on Organization is a connection for admins (empty for others)", async () => {
    const q = `query($id: String!) { organization(organizationId: $id) { samlProviders(first: 10) { totalCount edges { node { id label defaultRole defaultTeam { title } service { acsURL } } } } } }`;
    const res = await admin.graphql(q, { id: admin.organization });
    expect(res.errors).toBeUndefined();
    expect(res.data.organization.samlProviders.totalCount).toBe(2);
    expect(res.data.organization.samlProviders.edges[0].node).toMatchObject({
      id: providerId,
      defaultRole: "edit",
      defaultTeam: { title: "Engineering" },
    });
    const asReader = await reader.graphql(q, { id: admin.organization });
    expect(asReader.data.organization.samlProviders).toEqual({ totalCount: 0, edges: [] });
  });
});

describe("SAML sign-in", () => {
  let provider: any;
  const opts = (extra: Partial<ResponseOptions> = {}): ResponseOptions => ({
    acsURL: provider.service.acsURL,
    audience: provider.service.entityID,
    issuer: IDP_ENTITY,
    nameID: "new.person@acme.test",
    attributes: { displayName: "New Person" },
    ...extra,
  });

  beforeAll(async () => {
    provider = (await admin.get(base())).body.items[0];
  });

  it("the start URL redirects to the identity provider with an AuthnRequest", async () => {
    const res = await fetch(provider.service.startURL + "?RelayState=back-to-docs", { redirect: "manual" });
    expect(res.status).toBe(302);
    const location = new URL(res.headers.get("location")!);
    expect(`${location.origin}${location.pathname}`).toBe(IDP_SSO);
    expect(location.searchParams.get("RelayState")).toBe("back-to-docs");
    const request = zlib.inflateRawSync(Buffer.from(location.searchParams.get("SAMLRequest")!, "base64")).toString("utf8");
    expect(request).toContain("AuthnRequest");
    expect(request).toContain(`AssertionConsumerServiceURL="${provider.service.acsURL}"`);
    expect(request).toContain(`Destination="${IDP_SSO}"`);
    expect(request).toContain(`>${provider.service.entityID}</saml:Issuer>`);
  });

  it("serves the service provider metadata at its entityID", async () => {
    const res = await fetch(provider.service.entityID);
    expect(res.status).toBe(200);
    const xml = await res.text();
    expect(xml).toContain(`entityID="${provider.service.entityID}"`);
    expect(xml).toContain(`Location="${provider.service.acsURL}"`);
  });

  it("a signed response signs a new user in: member with defaultRole and defaultTeam, sso, an API token", async () => {
    const res = await postToAcs(provider.service.acsURL, b64(sign(responseXml(opts()), idp)));
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(["organization", "token", "user"]);
    expect(res.body.token).toMatch(/^dapi_/);
    expect(res.body.user).toMatchObject({
      object: "user",
      email: "new.person@acme.test",
      displayName: "New Person",
      urls: { location: expect.any(String) },
    });
    expect(res.body.organization).toMatchObject({ object: "organization", id: admin.organization, title: "Acme Docs" });

    const prisma = t.gateway.db.prisma;
    const member = await prisma.member.findUnique({
      where: { organizationId_userId: { organizationId: admin.organization, userId: res.body.user.id } },
    });
    expect(member).toMatchObject({ role: "edit", sso: true, disabled: false });
    expect(await prisma.teamMember.findUnique({ where: { teamId_userId: { teamId, userId: res.body.user.id } } })).toMatchObject({
      role: "member",
    });
    const token = await prisma.apiToken.findFirst({ where: { userId: res.body.user.id } });
    expect(token?.label).toBe(`sso:${provider.id}`);

    const me = t.caller(res.body.token);
    const org = await me.get(`/v1/orgs/${admin.organization}`);
    expect(org.status).toBe(200);
    expect(org.body.permissions.admin).toBe(false);
  });

  it("refuses a replayed response", async () => {
    const signed = b64(sign(responseXml(opts({ nameID: "replay@acme.test" })), idp));
    expect((await postToAcs(provider.service.acsURL, signed)).status).toBe(200);
    const again = await postToAcs(provider.service.acsURL, signed);
    expect(again.status).toBe(401);
    expect(again.body.error.message).toMatch(/already used/);
  });

  it("refuses forged, tampered, unsigned, expired, not-yet-valid and misaddressed responses", async () => {
    const cases: [string, string, RegExp][] = [
      ["forged", b64(sign(responseXml(opts()), attacker)), /signature/],
      ["forged response", b64(sign(responseXml(opts()), attacker, "response")), /signature/],
      [
        "tampered",
        b64(sign(responseXml(opts({ nameID: "victim@acme.test" })), idp).replace("victim@acme.test", "attacker@acme.test")),
        /signature/,
      ],
      ["unsigned", b64(responseXml(opts())), /not signed/],
      ["expired", b64(sign(responseXml(opts({ notBefore: -120, notOnOrAfter: -60 })), idp)), /expired/],
      ["not yet valid", b64(sign(responseXml(opts({ notBefore: 60, notOnOrAfter: 120 })), idp)), /not valid yet/],
      ["audience", b64(sign(responseXml(opts({ audience: "https://elsewhere.test/sp" })), idp)), /audience/],
      ["destination", b64(sign(responseXml(opts({ destination: "https://elsewhere.test/acs" })), idp)), /addressed to/],
      ["recipient", b64(sign(responseXml(opts({ recipient: "https://elsewhere.test/acs" })), idp)), /Recipient/],
      ["issuer", b64(sign(responseXml(opts({ issuer: "https://other-idp.test" })), idp)), /issued by/],
    ];
    for (const [name, samlResponse, message] of cases) {
      const res = await postToAcs(provider.service.acsURL, samlResponse);
      expect(res.status, name).toBe(401);
      expect(res.body.error.code, name).toBe(401);
      expect(res.body.error.message, name).toMatch(message);
    }
    expect(await t.gateway.db.prisma.user.count({ where: { email: { in: ["victim@acme.test", "attacker@acme.test"] } } })).toBe(0);
  });

  it("accepts a signature on the whole response, and an email attribute with an opaque NameID", async () => {
    const whole = await postToAcs(provider.service.acsURL, b64(sign(responseXml(opts({ nameID: "whole@acme.test" })), idp, "response")));
    expect(whole.status).toBe(200);
    expect(whole.body.user.email).toBe("whole@acme.test");
    const attr = await postToAcs(
      provider.service.acsURL,
      b64(
        sign(
          responseXml(
            opts({
              nameID: "a1b2c3",
              nameIDFormat: "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent",
              attributes: {
                "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress": "Attr.User@Acme.test",
                givenName: "Attr",
                sn: "User",
              },
            }),
          ),
          idp,
        ),
      ),
    );
    expect(attr.status).toBe(200);
    expect(attr.body.user).toMatchObject({ email: "attr.user@acme.test", displayName: "Attr User" });
  });

  it("answers 400 for malformed input and an assertion without email, 404/409 for unusable providers", async () => {
    expect((await postToAcs(provider.service.acsURL, "")).status).toBe(400);
    expect((await postToAcs(provider.service.acsURL, "A".repeat(1100 * 1024))).status).toBe(413);
    const notXml = await postToAcs(provider.service.acsURL, b64("hello"));
    expect(notXml.status).toBe(400);
    expect(notXml.body.error.message).toContain("SAMLResponse");
    const noEmail = await postToAcs(
      provider.service.acsURL,
      b64(
        sign(
          responseXml(opts({ nameID: "opaque-id", nameIDFormat: "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent", attributes: {} })),
          idp,
        ),
      ),
    );
    expect(noEmail.status).toBe(400);
    expect(noEmail.body.error.message).toMatch(/email/);
    expect((await postToAcs(`${t.url}/sso/saml/saml_missing/acs`, "x")).status).toBe(404);
    expect((await fetch(`${t.url}/sso/saml/saml_missing/start`, { redirect: "manual" })).status).toBe(404);
    const bare = (await admin.post(base(), { label: "Unconfigured" })).body;
    const start = await fetch(bare.service.startURL, { redirect: "manual" });
    expect(start.status).toBe(409);
    expect((await start.json()).error.message).toMatch(/ssoURL and certificate/);
    expect((await postToAcs(bare.service.acsURL, b64(sign(responseXml(opts()), idp)))).status).toBe(409);
    expect((await fetch(provider.service.acsURL)).status).toBe(405);
    await admin.delete(`${base()}/${bare.id}`);
  });

  it("marks an existing member sso, keeps their role, and refuses a disabled member", async () => {
    const res = await postToAcs(provider.service.acsURL, b64(sign(responseXml(opts({ nameID: "RITA@acme.test" })), idp)));
    expect(res.status).toBe(200);
    expect(res.body.user.id).toBe(reader.user);
    const prisma = t.gateway.db.prisma;
    const member = await prisma.member.findUnique({
      where: { organizationId_userId: { organizationId: admin.organization, userId: reader.user } },
    });
    expect(member).toMatchObject({ role: "read", sso: true });
    expect(await prisma.teamMember.count({ where: { teamId, userId: reader.user } })).toBe(0);

    const dis = await t.member(admin.organization, "dis@acme.test", "read");
    await prisma.member.update({
      where: { organizationId_userId: { organizationId: admin.organization, userId: dis.user } },
      data: { disabled: true },
    });
    const refused = await postToAcs(provider.service.acsURL, b64(sign(responseXml(opts({ nameID: "dis@acme.test" })), idp)));
    expect(refused.status).toBe(403);
    expect(refused.body.error.message).toContain("disabled");
  });

  it("with organization-wide SSO on, SSO members reach the organization only with an SSO-issued token", async () => {
    const ssoLogin = await postToAcs(provider.service.acsURL, b64(sign(responseXml(opts({ nameID: "rita@acme.test" })), idp)));
    const ritaSso = t.caller(ssoLogin.body.token);
    expect((await admin.patch(`/v1/orgs/${admin.organization}`, { sso: true })).status).toBe(200);

    const blocked = await reader.get(`/v1/orgs/${admin.organization}`);
    expect(blocked.status).toBe(403);
    expect(blocked.body.error.message).toMatch(/single sign-on/);
    expect((await reader.get(`/v1/orgs/${admin.organization}/translations`)).status).toBe(403);
    // The sign-in options stay readable, so the member can find where to sign in.
    expect((await reader.get(`/v1/orgs/${admin.organization}/sso`)).status).toBe(200);
    expect((await ritaSso.get(`/v1/orgs/${admin.organization}`)).status).toBe(200);
    // Members not marked sso (the admin who set it up) keep their tokens.
    expect((await admin.get(`/v1/orgs/${admin.organization}`)).status).toBe(200);

    // A token from another organization's SSO does not count.
    const theirs = (await other.post(`/v1/orgs/${other.organization}/saml`, { label: "Other IdP", certificate: idp.cert, ssoURL: IDP_SSO }))
      .body;
    const cross = await postToAcs(
      theirs.service.acsURL,
      b64(
        sign(responseXml({ ...opts({ nameID: "rita@acme.test" }), acsURL: theirs.service.acsURL, audience: theirs.service.entityID }), idp),
      ),
    );
    expect(cross.status).toBe(200);
    expect((await t.caller(cross.body.token).get(`/v1/orgs/${admin.organization}`)).status).toBe(403);

    const gql = await reader.graphql(`query($id: String!) { organization(organizationId: $id) { id } }`, { id: admin.organization });
    expect(gql.errors[0].extensions.code).toBe(403);

    expect((await admin.patch(`/v1/orgs/${admin.organization}`, { sso: false })).status).toBe(200);
    expect((await reader.get(`/v1/orgs/${admin.organization}`)).status).toBe(200);
  });
});
