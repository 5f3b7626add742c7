import type { Config } from "../../config.js";

/** Where the service side of a SAML provider lives on this server (see sso.http.ts). */
export function samlServiceUrls(config: Pick<Config, "publicUrl">, providerId: string) {
  const base = `${config.publicUrl}/sso/saml/${encodeURIComponent(providerId)}`;
  return {
    /** Assertion Consumer Service: takes the identity provider's HTTP-POST SAMLResponse. */
    acsURL: `${base}/acs`,
    /** Starts a sign-in: redirects to the identity provider with an AuthnRequest. */
    startURL: `${base}/start`,
    /** The service provider's entity id, which is also where its metadata is served. */
    entityID: `${base}/metadata`,
  };
}

export function samlProviderUrls(config: Pick<Config, "publicUrl">, organizationId: string, providerId: string) {
  return { location: `${config.publicUrl}/v1/orgs/${organizationId}/saml/${providerId}` };
}
