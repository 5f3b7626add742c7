import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startGateway, type TestGateway } from "../../helpers/gateway.js";
import { acmeDocs, expectError, type Admin, type Member } from "../../helpers/fixtures.js";
import { failure, gitbookClient } from "../../helpers/gitbook-client.js";

vi.setConfig({ testTimeout: 60_000, hookTimeout: 240_000 });

let t: TestGateway;
let admin: Admin;
let other: Admin;
let reader: Member;
let guest: Member;

beforeAll(async () => {
  t = await startGateway();
  ({ admin, other, reader, guest } = await acmeDocs(t, { reader: ["rita@acme.test", "read"], guest: ["gus@acme.test", null] }));
});

afterAll(async () => {
  await t?.close();
});

describe("GET /v1/users/{userId} (GitBook's getUserById)", () => {
  it("answers GitBook's User for the caller and for members of an organization the caller shares", async () => {
    const api = gitbookClient(t, admin.token);
    const me = (await api.users.getUserById(admin.user)).data;
    expect(me).toEqual({
      object: "user",
      id: admin.user,
      displayName: expect.any(String),
      email: "ada@acme.test",
      urls: { location: `${t.url}/v1/users/${admin.user}` },
    });
    expect((await api.users.getUserById(reader.user)).data).toMatchObject({ id: reader.user, email: "rita@acme.test" });
    // Members with a role see every member, guests included.
    expect((await gitbookClient(t, reader.token).users.getUserById(guest.user)).data.id).toBe(guest.user);
  });

  it("is 404 for users the caller shares no organization with, for guests looking at others, and for unknown ids", async () => {
    expect(await failure(gitbookClient(t, other.token).users.getUserById(admin.user))).toMatchObject({ code: 404 });
    expectError(await other.get(`/v1/users/${reader.user}`), 404, "User");
    // A guest sees only themself, as on the members routes.
    expectError(await guest.get(`/v1/users/${admin.user}`), 404);
    expect((await guest.get(`/v1/users/${guest.user}`)).status).toBe(200);
    expectError(await admin.get("/v1/users/usr_missing"), 404);
    expect((await t.caller("").get(`/v1/users/${admin.user}`)).status).toBe(401);
  });

  it("is the user field of the graph", async () => {
    const res = await admin.graphql(`query($id: String!) { user(userId: $id) { id displayName email } }`, { id: reader.user });
    expect(res.errors).toBeUndefined();
    expect(res.data.user).toMatchObject({ id: reader.user, email: "rita@acme.test" });
    const hidden = await other.graphql(`query($id: String!) { user(userId: $id) { id } }`, { id: reader.user });
    expect(hidden.errors?.[0]?.extensions?.code).toBe(404);
  });
});
