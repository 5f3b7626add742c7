/**
 * Admin command line: `npm run admin -- <command> [--flag value …]`.
 *
 *   bootstrap    --email <e> --org <title> [--name <display name>]
 *   member-add   --org <id or title> --email <e> [--role admin|create|review|edit|comment|read|guest]
 *   token-create --email <e> [--label <text>]
 *   token-revoke --token <token or token id>
 *
 * The last line printed is one JSON object. While a server holds the embedded database, the
 * command is sent to it over its local admin channel; otherwise it opens the database itself.
 * Standard error says which database the command used, and warns when a server listens on PORT
 * while none holds the embedded data folder (that server uses another DATA_DIR or DATABASE_URL,
 * so what the command creates is not in its database).
 */
import fs from "node:fs";
import net from "node:net";
import { loadConfig, type Config } from "../config.js";
import { databaseOptions, openDatabase } from "../core/db/db.js";
import { awaitedPublisher } from "../core/messaging/pubsub.js";
import { accessScope } from "../core/access/access-cache.js";
import { readLock } from "../core/db/lock.js";
import { runAdminCommand, type AdminCommand } from "./commands.js";

function parseArgs(argv: string[]): AdminCommand {
  const [command, ...rest] = argv;
  const flags: Record<string, string> = {};
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (!arg.startsWith("--")) throw new Error(`unexpected argument "${arg}"`);
    const eq = arg.indexOf("=");
    if (eq > 0) flags[arg.slice(2, eq)] = arg.slice(eq + 1);
    else flags[arg.slice(2)] = rest[++i] ?? "";
  }
  return { command, ...flags } as AdminCommand;
}

/** The database a command uses, for people: the embedded folder, or PostgreSQL without its password. */
function describeDatabase(config: Config, existed: boolean): string {
  if (config.databaseUrl) {
    try {
      const url = new URL(config.databaseUrl);
      return `PostgreSQL ${url.username ? `${decodeURIComponent(url.username)}@` : ""}${url.host}${url.pathname} (DATABASE_URL)`;
    } catch {
      return "PostgreSQL (DATABASE_URL)";
    }
  }
  const origin = process.env.DATA_DIR ? "DATA_DIR" : "DATA_DIR is not set: ./data of the current folder";
  return `embedded database in ${config.dataDir} (${origin}${existed ? "" : "; the folder did not exist and is created now"})`;
}

/** Whether something accepts connections on the port on this machine (within a second). */
function somethingListens(port: number): Promise<boolean> {
  if (!port) return Promise.resolve(false);
  return new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    const done = (listening: boolean) => {
      socket.destroy();
      resolve(listening);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

async function main() {
  const cmd = parseArgs(process.argv.slice(2));
  if (!cmd.command || cmd.command === ("help" as any)) {
    console.log(
      "usage: npm run admin -- bootstrap --email <e> --org <title> | member-add --org <o> --email <e> [--role r] | token-create --email <e> | token-revoke --token <t>",
    );
    process.exit(cmd.command ? 0 : 2);
  }
  const config = loadConfig();
  const holder = config.databaseUrl ? null : await readLock(config.dataDir);
  let result: Record<string, unknown>;
  if (holder) {
    if (!holder.port || !holder.adminSecret) {
      throw new Error(
        `the data folder ${config.dataDir} is in use by process ${holder.pid}, which takes no admin commands; retry when it has stopped`,
      );
    }
    const response = await fetch(`http://127.0.0.1:${holder.port}/_admin/command`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-admin-secret": holder.adminSecret },
      body: JSON.stringify(cmd),
    });
    const body = (await response.json()) as any;
    if (!response.ok) throw new Error(body?.error?.message ?? `server answered ${response.status}`);
    console.error(
      `admin: embedded database in ${config.dataDir}, through the server that holds it (pid ${holder.pid}, port ${holder.port})`,
    );
    result = body;
  } else {
    console.error(`admin: ${describeDatabase(config, config.databaseUrl ? true : fs.existsSync(config.dataDir))}`);
    if (!config.databaseUrl && (await somethingListens(config.port))) {
      console.error(
        `admin: warning: a server is listening on port ${config.port}, but no server holds ${config.dataDir}: ` +
          `it uses another DATA_DIR (or DATABASE_URL), so what this command creates is not in its database and its tokens are refused there. ` +
          `Run the command with the server's DATA_DIR or DATABASE_URL.`,
      );
    }
    const db = await openDatabase(databaseOptions(config));
    try {
      result = await runAdminCommand(db.prisma, cmd);
    } finally {
      await db.close();
    }
    // Gateways sharing this PostgreSQL database drop the tokens and memberships they cached
    // (a revoked token, a new role) through Redis; without it, after ACCESS_CACHE_TTL_MS at most.
    if (config.redisUrl) {
      const publisher = awaitedPublisher(config.redisUrl);
      try {
        await publisher.publish("access:changed", { origin: "admin", database: accessScope(config) }, true);
      } catch (err) {
        console.error(
          `admin: warning: could not tell the gateways through Redis (${(err as Error).message}); they see the change within ACCESS_CACHE_TTL_MS`,
        );
      } finally {
        publisher.close();
      }
    }
  }
  console.log(JSON.stringify(result));
}

main().catch((err) => {
  console.error(`admin: ${(err as Error).message}`);
  process.exit(1);
});
