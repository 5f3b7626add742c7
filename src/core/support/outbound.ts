import dns from "node:dns";
import net from "node:net";
import ipaddr from "ipaddr.js";
import type { Agent, buildConnector as BuildConnector } from "undici";
import { badInput } from "../errors.js";
import { readsOutsideDatabase } from "../cache/request-reads.js";
import { lazy } from "./lazy.js";

/**
 * Requests the server makes to addresses its users choose — website imports, OpenAPI sources,
 * integration event deliveries, renders and forwarded public-endpoint requests — go only to public
 * unicast addresses, so that nobody can use the server to reach its own private network (cloud
 * metadata, databases, admin interfaces). OUTBOUND_ALLOWED_NETWORKS lists networks allowed besides
 * (CIDRs or single addresses, comma-separated: `10.0.0.0/8,127.0.0.1`), for an intranet wiki or an
 * integration running on the same machine.
 *
 * The check is made when connecting, on every address a host name resolves to and on every
 * connection a redirect opens, so a name that resolves differently later (DNS rebinding) or a
 * redirect to a private address is refused too; `checkOutboundUrl` refuses what is refused for
 * sure (a private literal address, localhost) as early as input validation.
 */
type Network = [ipaddr.IPv4 | ipaddr.IPv6, number];

export const OUTBOUND_REFUSED = "OUTBOUND_REFUSED";

/** The setting outbound requests are checked against (config.ts `outboundAllowedNetworks`). */
export interface OutboundConfig {
  outboundAllowedNetworks: string[];
}

/** Parses OUTBOUND_ALLOWED_NETWORKS; throws naming the bad entry. */
export function parseAllowedNetworks(value: string | undefined): string[] {
  const entries = (value ?? "").split(/[\s,]+/).filter(Boolean);
  for (const entry of entries) {
    if (!ipaddr.isValidCIDR(entry) && !ipaddr.isValid(entry)) {
      throw new Error(`OUTBOUND_ALLOWED_NETWORKS: "${entry}" is neither an IP address nor a CIDR network (10.0.0.0/8, fd00::/8).`);
    }
  }
  return entries;
}

function networksOf(entries: string[]): Network[] {
  return entries.map((entry) => {
    if (ipaddr.isValidCIDR(entry)) return ipaddr.parseCIDR(entry);
    const ip = ipaddr.parse(entry);
    return [ip, ip.kind() === "ipv4" ? 32 : 128];
  });
}

/** Whether a connection to this address is allowed: public unicast, or in an allowed network. */
function permitted(address: string, networks: Network[]): boolean {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.parse(address);
  } catch {
    return false;
  }
  if (ip.kind() === "ipv6" && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  if (networks.some(([range, bits]) => range.kind() === ip.kind() && ip.match(range, bits))) return true;
  return ip.range() === "unicast";
}

function refused(host: string, address: string): Error {
  const err = new Error(
    `${host} is ${host === address ? "" : `at ${address}, `}a private or reserved address; this server does not connect to those unless OUTBOUND_ALLOWED_NETWORKS allows them`,
  );
  (err as NodeJS.ErrnoException).code = OUTBOUND_REFUSED;
  return err;
}

const agents = new Map<string, Agent>();
/** undici (the pool and connector below), loaded by the first outbound request rather than at start. */
const undici = lazy(() => import("undici"));

/** The connection pool of outbound requests under the configured policy (one per policy). */
async function outboundDispatcher(config: OutboundConfig): Promise<Agent> {
  const key = config.outboundAllowedNetworks.join(",");
  let agent = agents.get(key);
  if (agent) return agent;
  const { Agent, buildConnector } = await undici();
  agent = agents.get(key);
  if (agent) return agent;
  const networks = networksOf(config.outboundAllowedNetworks);
  const lookup = ((hostname: string, options: dns.LookupOptions, callback: (...args: any[]) => void) => {
    dns.lookup(hostname, options, (err, address: string | dns.LookupAddress[], family?: number) => {
      if (err) return callback(err, address, family);
      const addresses = Array.isArray(address) ? address.map((a) => a.address) : [address];
      const bad = addresses.find((a) => !permitted(a, networks));
      if (bad) return callback(refused(hostname, bad), address, family);
      callback(null, address, family);
    });
  }) as unknown as net.LookupFunction;
  const connector = buildConnector({ lookup } as BuildConnector.BuildOptions);
  agent = new Agent({
    connect: (opts, callback) => {
      const host = opts.hostname.replace(/^\[|\]$/g, "");
      // A literal address is connected to without a lookup: check it here.
      if (net.isIP(host) && !permitted(host, networks)) return callback(refused(host, host), null);
      return connector(opts, callback);
    },
  });
  agents.set(key, agent);
  return agent;
}

/** fetch() under the outbound policy. An answer made with what it fetched is not kept by the response cache. */
export async function outboundFetch(config: OutboundConfig, url: string | URL, init: RequestInit = {}): Promise<Response> {
  readsOutsideDatabase();
  return fetch(url, { ...init, dispatcher: await outboundDispatcher(config) } as RequestInit);
}

/**
 * Refuses, as a 400 naming the field, a URL whose host is certainly refused when connecting: a
 * private or reserved literal address, or localhost (names are checked when connecting).
 */
export function checkOutboundUrl(config: OutboundConfig, field: string, url: string): void {
  let host: string;
  try {
    host = new URL(url).hostname.replace(/^\[|\]$/g, "").toLowerCase();
  } catch {
    return; // the field's own URL check names the problem
  }
  const networks = networksOf(config.outboundAllowedNetworks);
  const literal = host === "localhost" || host.endsWith(".localhost") ? "127.0.0.1" : net.isIP(host) ? host : null;
  if (literal && !permitted(literal, networks)) {
    throw badInput(`${field}: ${refused(host, literal).message}.`);
  }
}

/** Whether an error of fetch() comes from the outbound policy (its message then says why). */
export function outboundRefusal(err: unknown): string | null {
  let cause = err as any;
  for (let depth = 0; cause && depth < 4; depth++, cause = cause.cause) {
    if (cause.code === OUTBOUND_REFUSED) return cause.message as string;
  }
  return null;
}
