import type { Caller, TestGateway } from "../../helpers/gateway.js";
import { createSpace } from "../../helpers/fixtures.js";

export type { Admin } from "../../helpers/fixtures.js";

/** Creates a space in the organization and returns its id. */
export async function space(caller: Caller, organizationId: string, title: string): Promise<string> {
  return (await createSpace(caller, organizationId, { title })).id;
}

/** Creates a site and returns its body. */
export async function site(caller: Caller, organizationId: string, body: Record<string, unknown>): Promise<any> {
  const res = await caller.post(`/v1/orgs/${organizationId}/sites`, body);
  if (res.status !== 201) throw new Error(`site: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

export function sitePath(organizationId: string, siteId: string, suffix = ""): string {
  return `/v1/orgs/${organizationId}/sites/${siteId}${suffix}`;
}

export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export type { TestGateway };
