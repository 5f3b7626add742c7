import { pubsubFailures, type PubSub } from "../messaging/pubsub.js";
import { statementParts, type StatementPart } from "../cache/row-keys.js";

/**
 * The gateway's in-process cache of who the caller is and what their memberships allow, so that
 * the hot path of a request sends no SQL statement for them:
 *
 * - API tokens by the SHA-256 hash of their secret (core/access/auth.ts `viewerFromToken`): live tokens
 *   only, an unknown or revoked token is read again each time;
 * - memberships by (user, SSO provider of the token, organization): answers of the membership
 *   door (core/access/access.ts), "not a member" included.
 * - what recording a space's activity reads in the writing transaction (events/activity.ts): the
 *   active installations of an organization, the organization of a space — dropped by their own
 *   changes (changesInstallations: installations, their spaces, an integration's scopes...) and
 *   with everything else.
 * - what resolving a published URL reads (domains/sites/url-lookup.ts, core/access/site-token.ts):
 *   which site answers a host and path, its share keys and spaces — dropped by writes of sites,
 *   their structure and share links, and organization hostnames (changesSites), and with
 *   everything else.
 *
 * Invalidation does not depend on each write remembering it: the database layer reports every
 * write that took effect with the tables it wrote (core/db/db.ts `onCommittedWrite`, after the commit
 * for a transaction), and any write that may change an answer (see changesAccess: tokens,
 * members, SAML providers, an organization's `sso` flag, users deleted) drops every entry, here at
 * once and in the other gateway processes through the pub/sub (Redis when REDIS_URL is set;
 * `npm run admin` on PostgreSQL announces its writes there too). Such writes are rare; the
 * bookkeeping updates (`lastUsedAt`, `lastSeenAt`) and new tokens, organizations and users keep
 * the entries. A read that started before a change is not stored (a generation counter), so an
 * answer read from the old rows cannot outlive the change. Entries also expire after
 * ACCESS_CACHE_TTL_MS, a safety net only; 0 turns the cache off.
 */

/** What identifies the data of a gateway, so that gateways sharing a Redis but not a database ignore each other's changes. */
export function accessScope(config: { databaseUrl?: string; dataDir: string }): string {
  if (!config.databaseUrl) return `embedded:${config.dataDir}`;
  try {
    const url = new URL(config.databaseUrl);
    return `postgres:${url.hostname}:${url.port || 5432}${url.pathname}`;
  } catch {
    return `postgres:${config.databaseUrl}`;
  }
}

/** The stored part of an API token that authentication needs. */
export interface TokenRow {
  id: string;
  userId: string;
  label: string | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}

interface Entry<V> {
  value: V;
  expires: number;
}

/** Entries kept per kind; past it the oldest go first. */
const MAX_ENTRIES = 50_000;

/** The columns an UPDATE statement sets (null when its SET clause cannot be read). */
function updatedColumns(sql: string): string[] | null {
  const set = /\bSET\s+([\s\S]*?)\s+WHERE\b/i.exec(sql)?.[1];
  if (!set) return null;
  return [...set.matchAll(/"([^"]+)"\s*=/g)].map((m) => m[1]!);
}

/**
 * For each table answers are read from, whether an update of these columns may change one: a
 * token's `lastUsedAt` and a member's `lastSeenAt` are bookkeeping, an organization matters only
 * through its `sso` flag, users only when deleted.
 */
const UPDATE_CHANGES: Record<string, (columns: string[]) => boolean> = {
  ApiToken: (columns) => columns.some((c) => c !== "lastUsedAt"),
  Member: (columns) => columns.some((c) => c !== "lastSeenAt"),
  Organization: (columns) => columns.includes("sso"),
  SamlProvider: () => true,
  User: () => false,
};
/** Tables whose new rows may change an answer (a new member; a new token, organization or user changes none). */
const INSERT_CHANGES = new Set(["Member", "SamlProvider"]);

/**
 * For each table the installations of an organization and the organization of a space are read
 * from (events/activity.ts), whether a write of it may change them: anything done to an
 * installation or its spaces; an integration's scopes, owner and development settings (its new
 * rows have no installations yet); an organization or a space deleted (their installations go
 * with them), or a space given another organization.
 */
const INSTALLATION_CHANGES: Record<string, (verb: string, columns: string[] | null) => boolean> = {
  IntegrationInstallation: () => true,
  IntegrationSpaceInstallation: () => true,
  Integration: (verb, columns) =>
    verb === "DELETE" ||
    (verb === "UPDATE" && (!columns || columns.some((c) => ["scopes", "ownerId", "devTunnelUrl", "devAll", "id"].includes(c)))),
  Organization: (verb, columns) => verb === "DELETE" || (verb === "UPDATE" && (!columns || columns.includes("id"))),
  Space: (verb, columns) =>
    verb === "DELETE" || (verb === "UPDATE" && (!columns || columns.some((c) => c === "organizationId" || c === "id"))),
};

/**
 * The writes of `table` in `statements`: each statement itself, or the parts of a statement made
 * of data-modifying parts (WITH …) that write `table` (row-keys.ts `statementParts`); a statement
 * of which no part can be read counts as a write of unknown text.
 */
function partsOf(statements: readonly string[], table: string): StatementPart[] {
  return statements.flatMap((sql) => {
    const parts = statementParts(sql).filter((p) => p.table === table);
    return parts.length ? parts : [{ verb: "UPDATE" as const, table, text: null }];
  });
}

/** Whether writes (table → statements) may change which installations record a space's activity. */
export function changesInstallations(writes: ReadonlyMap<string, readonly string[]>): boolean {
  for (const [table, statements] of writes) {
    const change = INSTALLATION_CHANGES[table];
    if (!change) continue;
    for (const part of partsOf(statements, table)) {
      // A part whose text cannot be taken out of its statement may change anything.
      if (part.text === null || change(part.verb, part.verb === "UPDATE" ? updatedColumns(part.text) : null)) return true;
    }
  }
  return false;
}

/**
 * Tables whose writes may change which site a published URL names, its share keys or the spaces it
 * shows: every write of a site, its structure and share links; an organization's hostname; a space
 * deleted, restored or moved (a site shows only live spaces of its organization).
 */
const SITE_CHANGES: Record<string, (verb: string, columns: string[] | null) => boolean> = {
  Site: () => true,
  SiteSection: () => true,
  SiteSectionGroup: () => true,
  SiteSpace: () => true,
  SiteShareLink: () => true,
  Organization: (verb, columns) =>
    verb === "DELETE" || (verb === "UPDATE" && (!columns || columns.some((c) => c === "hostname" || c === "id"))),
  Space: (verb, columns) =>
    verb === "DELETE" || (verb === "UPDATE" && (!columns || columns.some((c) => ["deletedAt", "organizationId", "id"].includes(c)))),
};

/** Whether writes (table → statements) may change what resolving a published URL answers. */
export function changesSites(writes: ReadonlyMap<string, readonly string[]>): boolean {
  for (const [table, statements] of writes) {
    const change = SITE_CHANGES[table];
    if (!change) continue;
    for (const part of partsOf(statements, table)) {
      if (part.text === null || change(part.verb, part.verb === "UPDATE" ? updatedColumns(part.text) : null)) return true;
    }
  }
  return false;
}

/** Whether writes (table → statements) may change a token's or a membership's answer. */
export function changesAccess(writes: ReadonlyMap<string, readonly string[]>): boolean {
  for (const [table, statements] of writes) {
    const update = UPDATE_CHANGES[table];
    if (!update) continue;
    for (const { verb, text } of partsOf(statements, table)) {
      if (text === null || verb === "DELETE") return true;
      if (verb === "INSERT") {
        if (INSERT_CHANGES.has(table)) return true;
        continue;
      }
      const columns = updatedColumns(text);
      if (!columns || update(columns)) return true;
    }
  }
  return false;
}

/** The pub/sub message of a change: of access (every entry dropped), or of installations only. */
export interface AccessChange {
  origin: string;
  database: string;
  kind?: "installations" | "sites";
}

export class AccessCache {
  readonly enabled: boolean;
  /** Answers served from the cache and read from the database (the gateway's metrics). */
  readonly stats = { hits: 0, misses: 0 };
  private readonly tokens = new Map<string, Entry<TokenRow>>();
  private readonly members = new Map<string, Entry<unknown>>();
  /** Token ids known live (live streams re-check their token before each delivery). */
  private readonly liveTokens = new Map<string, Entry<true>>();
  /**
   * What recording a space's activity reads (events/activity.ts): the active installations of an
   * organization, and the organization of a space. Dropped on their own when only they change
   * (changesInstallations), with everything else otherwise.
   */
  private readonly installations = new Map<string, Entry<unknown>>();
  /** What resolving published URLs reads (see changesSites), by key. */
  private readonly sites = new Map<string, Entry<unknown>>();
  private generation = 0;
  private installationsGeneration = 0;
  private sitesGeneration = 0;
  private database = "";
  private outagesSeen = pubsubFailures.outages;
  private readonly origin = Math.random().toString(36).slice(2);
  private readonly clearListeners = new Set<() => void>();
  private announce?: (payload: AccessChange) => Promise<void>;
  private listening?: { return?: () => unknown };

  constructor(private readonly ttlMs: number) {
    this.enabled = ttlMs > 0;
  }

  /**
   * Drops every entry after each write of `db` that may change an answer (see changesAccess), and
   * the installations' entries after a write that may change those (see changesInstallations).
   */
  watch(db: { onCommittedWrite(listener: (writes: ReadonlyMap<string, readonly string[]>) => Promise<void> | void): void }): void {
    db.onCommittedWrite(async (writes) => {
      if (changesAccess(writes)) return this.changed();
      // Independent kinds: one write may change both (a space deleted).
      const sites = changesSites(writes);
      if (changesInstallations(writes)) await this.installationsChanged();
      if (sites) await this.sitesChanged();
    });
  }

  /**
   * Shares changes with the other gateway processes on the same database (`database`, see
   * accessScope) and hears theirs, through `pubsub`. `publish` announces a change and resolves once
   * the pub/sub has passed it on (Redis: an awaited PUBLISH), so a write answers only after the
   * other processes were told; without it, `pubsub.publish`.
   */
  connect(pubsub: PubSub, database: string, publish?: (topic: "access:changed", payload: AccessChange) => Promise<void>): void {
    this.database = database;
    this.announce = publish
      ? (payload) => publish("access:changed", payload)
      : async (payload) => pubsub.publish("access:changed", payload);
    const stream = pubsub.subscribe("access:changed");
    this.listening = stream as { return?: () => unknown };
    void (async () => {
      try {
        for await (const message of stream) {
          if (message.origin === this.origin || message.database !== this.database) continue;
          if (message.kind === "installations") this.clearInstallations();
          else if (message.kind === "sites") this.clearSites();
          else this.clear();
        }
      } catch {
        /* the pub/sub closed */
      }
    })();
  }

  close(): void {
    void this.listening?.return?.();
  }

  /** A live token by the hash of its secret; `read` fetches the row on a miss. */
  async token(hash: string, read: () => Promise<TokenRow | null>): Promise<TokenRow | null> {
    const cached = this.fresh(this.tokens, hash);
    if (cached) return cached;
    const generation = this.generation;
    const row = await read();
    if (row && !row.revokedAt && this.enabled && generation === this.generation) {
      this.store(this.tokens, hash, { value: row, expires: Date.now() + this.ttlMs });
    }
    return row;
  }

  /** Whether the live token with this hash is held (authenticating it reads nothing). */
  holdsToken(hash: string): boolean {
    return this.fresh(this.tokens, hash) !== undefined;
  }

  /**
   * Whether the token `tokenId` is live (exists, not revoked); `read` answers on a miss (live
   * answers are kept, a revoked token is read again). Live streams ask it before each delivery.
   */
  async liveToken(tokenId: string, read: () => Promise<boolean>): Promise<boolean> {
    if (this.fresh(this.liveTokens, tokenId)) return true;
    const generation = this.generation;
    const live = await read();
    if (live && this.enabled && generation === this.generation)
      this.store(this.liveTokens, tokenId, { value: true, expires: Date.now() + this.ttlMs });
    return live;
  }

  /**
   * A number that changes whenever cached answers are dropped (a change of access here or in
   * another process, a pub/sub outage): what was checked at one version holds while it is current.
   */
  version(): number {
    if (pubsubFailures.outages !== this.outagesSeen) {
      this.outagesSeen = pubsubFailures.outages;
      this.clear();
    }
    return this.generation;
  }

  /**
   * The membership answers of `userId` (with a token of SSO provider `ssoProvider`) in each of
   * `organizationIds`, in order; `read` resolves those not cached, in one batch.
   */
  async memberships<V>(
    userId: string,
    ssoProvider: string | null | undefined,
    organizationIds: readonly string[],
    read: (organizationIds: readonly string[]) => Promise<V[]>,
  ): Promise<V[]> {
    const key = (organizationId: string) => `${userId}\u0000${ssoProvider ?? ""}\u0000${organizationId}`;
    const answers = organizationIds.map((id) => this.fresh(this.members, key(id)) as V | undefined);
    const missing = organizationIds.filter((_, i) => answers[i] === undefined);
    if (missing.length === 0) return answers as V[];
    const generation = this.generation;
    const read_ = await read(missing);
    const storable = this.enabled && generation === this.generation;
    const expires = Date.now() + this.ttlMs;
    missing.forEach((organizationId, i) => {
      const value = read_[i]!;
      answers[organizationIds.indexOf(organizationId)] = value;
      if (storable) this.store(this.members, key(organizationId), { value: deepFreeze(value), expires });
    });
    return answers as V[];
  }

  /**
   * The active installations of organization `organizationId` as `read` (run on a miss, with the
   * caller's transaction) gives them: see events/activity.ts.
   */
  installationsOf<V>(organizationId: string, read: () => Promise<V>): Promise<V> {
    return this.installationEntry(`installations\u0000${organizationId}`, read);
  }

  /** The organization of space `spaceId`; `read` answers on a miss (null: no such space, not kept). */
  spaceOrganization(spaceId: string, read: () => Promise<string | null>): Promise<string | null> {
    return this.installationEntry(`space\u0000${spaceId}`, read);
  }

  /**
   * What resolving a published URL reads under `key` (a site by host and path, a site's share keys
   * and spaces); `read` answers on a miss, "none" answers (null) included: they are dropped by the
   * same writes (changesSites), so a URL that names no site costs no statement.
   */
  async siteEntry<V>(key: string, read: () => Promise<V>): Promise<V> {
    const cached = this.fresh(this.sites, key) as { value: V } | undefined;
    if (cached !== undefined) return cached.value;
    const generation = this.sitesGeneration;
    const value = await read();
    if (this.enabled && generation === this.sitesGeneration) {
      this.store(this.sites, key, { value: deepFreeze({ value }), expires: Date.now() + this.ttlMs });
    }
    return value;
  }

  /** A committed write changed sites (changesSites): drops their entries here and in the other processes. */
  async sitesChanged(): Promise<void> {
    this.clearSites();
    await this.announce?.({ origin: this.origin, database: this.database, kind: "sites" });
  }

  private clearSites(): void {
    this.sitesGeneration++;
    this.sites.clear();
  }

  private async installationEntry<V>(key: string, read: () => Promise<V>): Promise<V> {
    const cached = this.fresh(this.installations, key) as V | undefined;
    if (cached !== undefined) return cached;
    const generation = this.installationsGeneration;
    const value = await read();
    if (value !== null && this.enabled && generation === this.installationsGeneration) {
      this.store(this.installations, key, { value: deepFreeze(value), expires: Date.now() + this.ttlMs });
    }
    return value;
  }

  /**
   * A committed write changed installations (changesInstallations): drops their entries here and,
   * once the returned promise resolves, the other gateway processes have been told.
   */
  async installationsChanged(): Promise<void> {
    this.clearInstallations();
    await this.announce?.({ origin: this.origin, database: this.database, kind: "installations" });
  }

  /**
   * A committed write changed access: drops every entry here and, once the returned promise
   * resolves, the other gateway processes have been told (a failure to tell them is logged by the
   * caller; they then see the change after the TTL or, after a Redis outage, at once).
   */
  async changed(): Promise<void> {
    this.clear();
    await this.announce?.({ origin: this.origin, database: this.database });
  }

  /**
   * Has `listener` called whenever every entry is dropped: after a change made here, one another
   * process announced, or a Redis outage (the response cache drops what access decided).
   */
  onClear(listener: () => void): void {
    this.clearListeners.add(listener);
  }

  /** Drops every entry of this process only (tests compare cached answers with uncached ones). */
  forget(): void {
    this.clear();
  }

  private clearInstallations(): void {
    this.installationsGeneration++;
    this.installations.clear();
  }

  private clear(): void {
    this.generation++;
    this.tokens.clear();
    this.members.clear();
    this.liveTokens.clear();
    this.clearInstallations();
    this.clearSites();
    for (const listener of this.clearListeners) listener();
  }

  private fresh<V>(map: Map<string, Entry<V>>, key: string): V | undefined {
    if (!this.enabled) return undefined;
    // Changes published while Redis was unreachable are lost: after an outage nothing cached before counts.
    if (pubsubFailures.outages !== this.outagesSeen) {
      this.outagesSeen = pubsubFailures.outages;
      this.clear();
    }
    const entry = map.get(key);
    if (entry && entry.expires > Date.now()) {
      this.stats.hits++;
      return entry.value;
    }
    if (entry) map.delete(key);
    this.stats.misses++;
    return undefined;
  }

  private store<V>(map: Map<string, Entry<V>>, key: string, entry: Entry<V>): void {
    map.delete(key);
    map.set(key, entry);
    if (map.size > MAX_ENTRIES) map.delete(map.keys().next().value!);
  }
}

/** Cached answers are shared by requests: nothing may change them in place. */
function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object" && !Object.isFrozen(value) && !(value instanceof Date)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}
