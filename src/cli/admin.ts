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
 */
import { loadConfig } from "../config.js";
import { openDatabase } from "../core/db.js";
import { readLock } from "../core/lock.js";
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

async function main() {
  const cmd = parseArgs(process.argv.slice(2));
  if (!cmd.command || cmd.command === ("help" as any)) {
    console.log("usage: npm run admin -- bootstrap --email <e> --org <title> | member-add --org <o> --email <e> [--role r] | token-create --email <e> | token-revoke --token <t>");
    process.exit(cmd.command ? 0 : 2);
  }
  const config = loadConfig();
  const holder = config.databaseUrl ? null : readLock(config.dataDir);
  let result: Record<string, unknown>;
  if (holder) {
    if (!holder.port || !holder.adminSecret) {
      throw new Error(`the data folder ${config.dataDir} is in use by process ${holder.pid}, which takes no admin commands; retry when it has stopped`);
    }
    const response = await fetch(`http://127.0.0.1:${holder.port}/_admin/command`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-admin-secret": holder.adminSecret },
      body: JSON.stringify(cmd),
    });
    const body = (await response.json()) as any;
    if (!response.ok) throw new Error(body?.error?.message ?? `server answered ${response.status}`);
    console.error(`(sent to the running server, pid ${holder.pid})`);
    result = body;
  } else {
    const db = await openDatabase({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
    try {
      result = await runAdminCommand(db.prisma, cmd);
    } finally {
      await db.close();
    }
  }
  console.log(JSON.stringify(result));
}

main().catch((err) => {
  console.error(`admin: ${(err as Error).message}`);
  process.exit(1);
});
