import { DOMParser } from "@xmldom/xmldom";
import { SAML, ValidateInResponseTo, generateServiceProviderMetadata, type Profile } from "@node-saml/node-saml";
import type { SamlProvider } from "../../generated/prisma/client.js";
import type { Config } from "../../config.js";
import { AppError, badInput } from "../../core/errors.js";
import { certificatePem } from "./sso.certificate.js";
import { samlServiceUrls } from "./sso.urls.js";

/**
 * The SAML 2.0 service-provider side of a provider, on @node-saml/node-saml: AuthnRequests over
 * the HTTP-Redirect binding, and HTTP-POST responses whose XML signature (on the response or on
 * the assertion) must verify against the provider's certificate, with the audience, destination,
 * recipient, issuer and validity window checked.
 */
const XMLDSIG = "http://www.w3.org/2000/09/xmldsig#";
const EMAIL_FORMAT = "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress";
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const EMAIL_ATTRIBUTES = [
  "email",
  "mail",
  "Email",
  "emailAddress",
  "EmailAddress",
  "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress",
  "urn:oid:0.9.2342.19200300.100.1.3",
];
const NAME_ATTRIBUTES = [
  "displayName",
  "name",
  "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/name",
  "urn:oid:2.16.840.1.113730.3.1.241",
];

const refused = (message: string) => new AppError(401, message);

type SamlConfig = Pick<Config, "publicUrl" | "samlClockSkewMs">;

export function requireConfigured(provider: SamlProvider): { ssoURL: string; pem: string } {
  const pem = provider.certificate ? certificatePem(provider.certificate) : null;
  if (!provider.ssoURL || !pem) {
    throw new AppError(
      409,
      `SAML provider "${provider.id}" is not configured for sign-in: it needs ${[!provider.ssoURL && "ssoURL", !pem && "certificate"].filter(Boolean).join(" and ")}.`,
    );
  }
  return { ssoURL: provider.ssoURL, pem };
}

function samlOf(provider: SamlProvider, config: SamlConfig) {
  const { ssoURL, pem } = requireConfigured(provider);
  const service = samlServiceUrls(config, provider.id);
  return new SAML({
    entryPoint: ssoURL,
    callbackUrl: service.acsURL,
    issuer: service.entityID,
    audience: service.entityID,
    idpCert: pem,
    // Either the response or the assertion must carry a valid signature (never neither).
    wantAuthnResponseSigned: false,
    wantAssertionsSigned: false,
    acceptedClockSkewMs: config.samlClockSkewMs,
    validateInResponseTo: ValidateInResponseTo.never, // replays are stopped by assertion id instead
    identifierFormat: EMAIL_FORMAT,
    disableRequestedAuthnContext: true,
    signatureAlgorithm: "sha256",
  });
}

/** The identity provider's sign-in URL carrying a deflated AuthnRequest (HTTP-Redirect binding). */
export async function authorizeUrl(provider: SamlProvider, config: SamlConfig, relayState?: string | null): Promise<string> {
  return samlOf(provider, config).getAuthorizeUrlAsync(relayState ?? "", undefined, {});
}

/** The service provider's metadata document (entity id, ACS URL, NameID format). */
export function serviceMetadata(provider: SamlProvider, config: SamlConfig): string {
  const service = samlServiceUrls(config, provider.id);
  return generateServiceProviderMetadata({
    issuer: service.entityID,
    callbackUrl: service.acsURL,
    identifierFormat: EMAIL_FORMAT,
    wantAssertionsSigned: true,
  });
}

export interface SamlIdentity {
  email: string;
  displayName: string | null;
  assertionId: string;
  /** Until when the assertion could be accepted: its id is remembered until then. */
  expiresAt: Date;
}

function first(value: unknown): string | null {
  const v = Array.isArray(value) ? value[0] : value;
  return typeof v === "string" && v.trim() ? v.trim() : null;
}

function explain(err: Error): string {
  const m = err.message;
  if (/signature/i.test(m)) {
    return "The SAML response's signature does not verify against this provider's certificate (forged, altered, or signed with another key).";
  }
  if (/expired|too old|No valid subject confirmation/i.test(m)) {
    return "The SAML assertion has expired (its NotOnOrAfter has passed): sign in again.";
  }
  if (/not yet valid/i.test(m)) return "The SAML assertion is not valid yet (its NotBefore is in the future).";
  if (/audience/i.test(m)) return `The SAML assertion is not meant for this service: ${m}.`;
  if (err.name === "SamlStatusError" || /status/i.test(m)) return `The identity provider did not sign the user in: ${m}.`;
  return `The SAML response was refused: ${m}.`;
}

/**
 * Verifies a base64 HTTP-POST SAMLResponse for the provider and returns who signed in. Throws
 * 400 for a malformed message and 401 for one that is unsigned, forged, expired, not yet valid,
 * or addressed to another service. Replays are checked by the caller (assertion ids).
 */
export async function verifySamlResponse(provider: SamlProvider, config: SamlConfig, samlResponse: string): Promise<SamlIdentity> {
  const saml = samlOf(provider, config);
  const service = samlServiceUrls(config, provider.id);
  const xml = Buffer.from(samlResponse, "base64").toString("utf8");
  let doc: Document | undefined;
  if (xml.trimStart().startsWith("<")) {
    const errors: string[] = [];
    doc = new DOMParser({
      errorHandler: { error: (e: string) => errors.push(e), fatalError: (e: string) => errors.push(e), warning: () => undefined },
    }).parseFromString(xml, "text/xml") as unknown as Document;
    if (errors.length) doc = undefined;
  }
  const root = doc?.documentElement;
  if (!root || root.localName !== "Response") throw badInput("SAMLResponse must be a base64-encoded SAML 2.0 <Response> document.");

  const destination = root.getAttribute("Destination");
  if (destination && destination !== service.acsURL) {
    throw refused(`The SAML response is addressed to "${destination}", not to this provider's acsURL "${service.acsURL}".`);
  }
  if (root.getElementsByTagNameNS(XMLDSIG, "Signature").length === 0) {
    throw refused("The SAML response is not signed: the identity provider must sign the response or its assertion.");
  }

  let profile: Profile | null;
  try {
    ({ profile } = await saml.validatePostResponseAsync({ SAMLResponse: samlResponse }));
  } catch (err) {
    throw refused(explain(err as Error));
  }
  if (!profile) throw refused("The SAML response carries no assertion.");
  if (provider.entityID && profile.issuer && profile.issuer !== provider.entityID) {
    throw refused(`The SAML assertion was issued by "${profile.issuer}", not by this provider's entityID "${provider.entityID}".`);
  }

  const assertion = (profile.getAssertion?.() as any)?.Assertion;
  const assertionId: string | undefined = assertion?.$?.ID;
  if (!assertionId || assertionId.length > 256) throw badInput("The SAML assertion has no usable ID.");

  const confirmations: any[] = assertion?.Subject?.[0]?.SubjectConfirmation ?? [];
  for (const c of confirmations) {
    const recipient = c?.SubjectConfirmationData?.[0]?.$?.Recipient;
    if (recipient && recipient !== service.acsURL) {
      throw refused(`The SAML assertion's Recipient "${recipient}" is not this provider's acsURL "${service.acsURL}".`);
    }
  }

  const deadlines = [
    assertion?.Conditions?.[0]?.$?.NotOnOrAfter,
    ...confirmations.map((c) => c?.SubjectConfirmationData?.[0]?.$?.NotOnOrAfter),
  ]
    .map((v) => (typeof v === "string" ? Date.parse(v) : NaN))
    .filter((v) => Number.isFinite(v));
  const expiresAt = new Date((deadlines.length ? Math.max(...deadlines) : Date.now() + 24 * 3600_000) + config.samlClockSkewMs);

  const attributes = (profile.attributes ?? {}) as Record<string, unknown>;
  let email: string | null = null;
  for (const name of EMAIL_ATTRIBUTES) {
    const value = first(attributes[name] ?? (profile as Record<string, unknown>)[name]);
    if (value && EMAIL.test(value)) {
      email = value;
      break;
    }
  }
  if (!email && profile.nameID && EMAIL.test(profile.nameID.trim())) email = profile.nameID.trim();
  if (!email) throw badInput("The SAML assertion carries no email address: send it as the NameID or as an email attribute.");

  let displayName: string | null = null;
  for (const name of NAME_ATTRIBUTES) if ((displayName = first(attributes[name]))) break;
  if (!displayName) {
    const given = first(attributes.givenName ?? attributes["http://schemas.xmlsoap.org/ws/2005/05/identity/claims/givenname"]);
    const family = first(
      attributes.sn ?? attributes.surname ?? attributes["http://schemas.xmlsoap.org/ws/2005/05/identity/claims/surname"],
    );
    displayName = [given, family].filter(Boolean).join(" ") || null;
  }
  return { email: email.toLowerCase(), displayName, assertionId, expiresAt };
}
