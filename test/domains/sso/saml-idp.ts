import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { signSamlPost } from "@node-saml/node-saml/lib/saml-post-signing.js";

/** A throwaway identity provider for tests: an RSA key and a self-signed certificate made by openssl. */
export interface TestIdp {
  key: string;
  cert: string;
}

export function makeIdp(cn: string): TestIdp {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "saml-idp-"));
  try {
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-sha256",
        "-days",
        "2",
        "-subj",
        `/CN=${cn}`,
        "-keyout",
        "key.pem",
        "-out",
        "cert.pem",
      ],
      { cwd: dir, stdio: "ignore" },
    );
    return { key: fs.readFileSync(path.join(dir, "key.pem"), "utf8"), cert: fs.readFileSync(path.join(dir, "cert.pem"), "utf8") };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export interface ResponseOptions {
  acsURL: string;
  audience: string;
  issuer: string;
  nameID?: string;
  nameIDFormat?: string;
  attributes?: Record<string, string>;
  /** Minutes from now. */
  notBefore?: number;
  notOnOrAfter?: number;
  destination?: string | null;
  recipient?: string;
  assertionId?: string;
}

const iso = (minutes: number) => new Date(Date.now() + minutes * 60_000).toISOString();
const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/"/g, "&quot;");

export function responseXml(o: ResponseOptions): string {
  const assertionId = o.assertionId ?? `_a${crypto.randomBytes(16).toString("hex")}`;
  const notBefore = iso(o.notBefore ?? -1);
  const notOnOrAfter = iso(o.notOnOrAfter ?? 5);
  const attributes = Object.entries(o.attributes ?? {})
    .map(([name, value]) => `<saml:Attribute Name="${esc(name)}"><saml:AttributeValue>${esc(value)}</saml:AttributeValue></saml:Attribute>`)
    .join("");
  const destination = o.destination === null ? "" : ` Destination="${esc(o.destination ?? o.acsURL)}"`;
  return (
    `<samlp:Response xmlns:samlp="urn:oasis:names:tc:SAML:2.0:protocol" xmlns:saml="urn:oasis:names:tc:SAML:2.0:assertion" ` +
    `ID="_r${crypto.randomBytes(16).toString("hex")}" Version="2.0" IssueInstant="${iso(0)}"${destination}>` +
    `<saml:Issuer>${esc(o.issuer)}</saml:Issuer>` +
    `<samlp:Status><samlp:StatusCode Value="urn:oasis:names:tc:SAML:2.0:status:Success"/></samlp:Status>` +
    `<saml:Assertion ID="${assertionId}" Version="2.0" IssueInstant="${iso(0)}">` +
    `<saml:Issuer>${esc(o.issuer)}</saml:Issuer>` +
    `<saml:Subject>` +
    (o.nameID !== undefined
      ? `<saml:NameID Format="${o.nameIDFormat ?? "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress"}">${esc(o.nameID)}</saml:NameID>`
      : "") +
    `<saml:SubjectConfirmation Method="urn:oasis:names:tc:SAML:2.0:cm:bearer">` +
    `<saml:SubjectConfirmationData NotOnOrAfter="${notOnOrAfter}" Recipient="${esc(o.recipient ?? o.acsURL)}"/>` +
    `</saml:SubjectConfirmation></saml:Subject>` +
    `<saml:Conditions NotBefore="${notBefore}" NotOnOrAfter="${notOnOrAfter}">` +
    `<saml:AudienceRestriction><saml:Audience>${esc(o.audience)}</saml:Audience></saml:AudienceRestriction></saml:Conditions>` +
    `<saml:AuthnStatement AuthnInstant="${iso(0)}" SessionIndex="_s1"><saml:AuthnContext>` +
    `<saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef>` +
    `</saml:AuthnContext></saml:AuthnStatement>` +
    (attributes ? `<saml:AttributeStatement>${attributes}</saml:AttributeStatement>` : "") +
    `</saml:Assertion></samlp:Response>`
  );
}

const RESPONSE = '/*[local-name(.)="Response" and namespace-uri(.)="urn:oasis:names:tc:SAML:2.0:protocol"]';
const ASSERTION = `${RESPONSE}/*[local-name(.)="Assertion" and namespace-uri(.)="urn:oasis:names:tc:SAML:2.0:assertion"]`;

/** Signs the assertion (the usual case) or the whole response with the identity provider's key. */
export function sign(xml: string, idp: TestIdp, what: "assertion" | "response" = "assertion"): string {
  return signSamlPost(xml, what === "assertion" ? ASSERTION : RESPONSE, {
    privateKey: idp.key,
    publicCert: idp.cert,
    signatureAlgorithm: "sha256",
    digestAlgorithm: "http://www.w3.org/2001/04/xmlenc#sha256",
  });
}

export const b64 = (xml: string) => Buffer.from(xml, "utf8").toString("base64");

/** Posts a SAMLResponse to an ACS URL as the identity provider's HTML form would. */
export async function postToAcs(acsURL: string, samlResponse: string, extra: Record<string, string> = {}) {
  const res = await fetch(acsURL, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ SAMLResponse: samlResponse, ...extra }).toString(),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}
