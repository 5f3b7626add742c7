import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startGateway, type TestGateway } from "../../helpers/gateway.js";

let t: TestGateway;
let admin: Awaited<ReturnType<TestGateway["bootstrap"]>>;

beforeAll(async () => {
  t = await startGateway();
  admin = await t.bootstrap("ada@acme.test", "Acme");
}, 180_000);
afterAll(() => t?.close());

describe("Space and change request counts", () => {
  it("follow the change requests and open comments stored", async () => {
    const spaceId = (await admin.post(`/v1/orgs/${admin.organization}/spaces`, { title: "Guide" })).body.id;
    const zero = (await admin.get(`/v1/spaces/${spaceId}`)).body;
    expect(zero).toMatchObject({ comments: 0, changeRequests: 0, changeRequestsOpen: 0, changeRequestsDraft: 0 });

    const first = (await admin.post(`/v1/spaces/${spaceId}/change-requests`, { subject: "One" })).body;
    await admin.post(`/v1/spaces/${spaceId}/change-requests`, { subject: "Two" });
    await admin.patch(`/v1/spaces/${spaceId}/change-requests/${first.number}`, { status: "open" });

    const kept = (await admin.post(`/v1/spaces/${spaceId}/comments`, { body: { markdown: "Keep" } })).body;
    const resolved = (await admin.post(`/v1/spaces/${spaceId}/comments`, { body: { markdown: "Done" } })).body;
    await admin.put(`/v1/spaces/${spaceId}/comments/${resolved.id}`, { resolved: true });
    await admin.post(`/v1/spaces/${spaceId}/comments/${kept.id}/replies`, { body: { markdown: "A reply is not a comment" } });
    await admin.post(`/v1/spaces/${spaceId}/change-requests/${first.id}/comments`, { body: { markdown: "On the change" } });

    const space = (await admin.get(`/v1/spaces/${spaceId}`)).body;
    expect(space).toMatchObject({ comments: 1, changeRequests: 2, changeRequestsOpen: 1, changeRequestsDraft: 1 });
    expect((await admin.get(`/v1/spaces/${spaceId}/change-requests/${first.id}`)).body.comments).toBe(1);
  });
});
