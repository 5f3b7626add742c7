import crypto from "node:crypto";
import { badInput } from "../../core/errors.js";

const PEM = /^-----BEGIN CERTIFICATE-----\s*([A-Za-z0-9+/=\s]+?)\s*-----END CERTIFICATE-----$/;
const BARE = /^[A-Za-z0-9+/=\s]+$/;

/**
 * The certificate as a canonical PEM block, or null when the text is not one X.509 certificate.
 * Accepts a PEM block or its bare base64 body (as some identity providers display it).
 */
export function certificatePem(text: string): string | null {
  const trimmed = text.trim();
  const body = PEM.exec(trimmed)?.[1] ?? (BARE.test(trimmed) ? trimmed : null);
  if (!body) return null;
  const base64 = body.replace(/\s+/g, "");
  if (!base64) return null;
  const pem = `-----BEGIN CERTIFICATE-----\n${base64.match(/.{1,64}/g)!.join("\n")}\n-----END CERTIFICATE-----\n`;
  try {
    new crypto.X509Certificate(pem);
    return pem;
  } catch {
    return null;
  }
}

export function checkCertificate(text: string): void {
  if (!certificatePem(text)) {
    throw badInput("certificate must be one X.509 certificate in PEM format (-----BEGIN CERTIFICATE----- … -----END CERTIFICATE-----).");
  }
}
