import { spawn, execFile } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshPostgres } from "../helpers/gateway.js";

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, "../..");
const tsx = path.join(root, "node_modules/.bin/tsx");

let env: NodeJS.ProcessEnv;
let dataDir: string;
let dropDb: (() => Promise<void>) | undefined;

beforeAll(async () => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "docs-api-cli-"));
  env = { ...process.env, DATA_DIR: dataDir, PORT: "0" };
  if (process.env.DATABASE_URL) {
    const db = await freshPostgres(process.env.DATABASE_URL);
    env.DATABASE_URL = db.url;
    dropDb = db.drop;
  }
});
afterAll(async () => {
  await dropDb?.();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

async function admin(...args: string[]) {
  return (await adminWithOutput(env, root, ...args)).result;
}

/** Runs an admin command with this environment in this folder: its JSON answer and what it wrote on standard error. */
async function adminWithOutput(environment: NodeJS.ProcessEnv, cwd: string, ...args: string[]) {
  const { stdout, stderr } = await run(tsx, [path.join(root, "src/cli/admin.ts"), ...args], { cwd, env: environment });
  const lines = stdout.trim().split("\n");
  return { result: JSON.parse(lines[lines.length - 1]!), stderr };
}

interface Server {
  url: string;
  output: () => string;
  stop: (signal?: NodeJS.Signals) => Promise<number | null>;
}

function startServer(): Promise<Server> {
  // Node itself with tsx as its loader: the tsx wrapper gives the server 60 ms to take a signal
  // and otherwise kills it (SIGKILL, exit 130), which a start-up busy with its database overran.
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], { cwd: root, env });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start: ${out}`)), 120_000);
    child.stdout.on("data", () => {
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({
          url: m[1]!.replace("localhost", "127.0.0.1"),
          output: () => out,
          stop: async (signal = "SIGTERM") => {
            child.kill(signal);
            return exited;
          },
        });
      }
    });
    exited.then((code) => reject(new Error(`server exited (${code}) before listening: ${out}`)));
  });
}

const orgs = (url: string, token: string) => fetch(`${url}/v1/orgs`, { headers: { authorization: `Bearer ${token}` } });

// Each step starts processes (tsx, the embedded database): generous limits for a loaded machine.
describe("npm run admin", { timeout: 180_000 }, () => {
  let first: { token: string; user: string; organization: string };

  it("bootstraps a user, organization and token before the server has ever started", async () => {
    first = await admin("bootstrap", "--email", "root@acme.test", "--org", "Acme");
    expect(first).toEqual({
      token: expect.stringMatching(/^dapi_/),
      user: expect.stringMatching(/^usr_/),
      organization: expect.stringMatching(/^org_/),
    });
  });

  it("works while the server runs, which refuses a second server on the same data", async () => {
    const server = await startServer();
    try {
      expect((await orgs(server.url, first.token)).status).toBe(200);

      const sent = await adminWithOutput(env, root, "bootstrap", "--email", "root@acme.test", "--org", "Acme");
      const again = sent.result;
      if (!env.DATABASE_URL) expect(sent.stderr).toContain(`embedded database in ${dataDir}, through the server that holds it`);
      expect(again.user).toBe(first.user);
      expect(again.organization).toBe(first.organization);
      expect(again.token).not.toBe(first.token);
      expect((await orgs(server.url, again.token)).status).toBe(200);

      const added = await admin("member-add", "--org", first.organization, "--email", "rita@acme.test", "--role", "read");
      expect(added.role).toBe("read");
      const token = await admin("token-create", "--email", "rita@acme.test", "--label", "laptop");
      const members = await orgs(server.url, token.token);
      expect((await members.json()).items[0].id).toBe(first.organization);
      expect(await admin("token-revoke", "--token", token.token)).toEqual({ revoked: true });
      expect((await orgs(server.url, token.token)).status).toBe(401);

      if (!env.DATABASE_URL) {
        const second = await startServer().then(
          (s) => s.stop().then(() => "started"),
          (err: Error) => err.message,
        );
        expect(second).toContain("in use by another process");
      }
    } finally {
      expect(await server.stop("SIGTERM")).toBe(0);
    }
    expect(fs.existsSync(path.join(dataDir, "server.lock"))).toBe(false);
  });

  it("keeps the data across a restart after SIGINT", async () => {
    const server = await startServer();
    try {
      const res = await orgs(server.url, first.token);
      expect((await res.json()).items.map((o: any) => o.id)).toEqual([first.organization]);
    } finally {
      expect(await server.stop("SIGINT")).toBe(0);
    }
  });

  it("says which database it used, and warns when a server listens on PORT but none holds that data folder", async () => {
    // Another server on PORT (here anything that accepts connections), and no DATA_DIR: ./data of the current folder.
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), "docs-api-cli-cwd-"));
    const listener = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
    const port = (listener.address() as net.AddressInfo).port;
    try {
      const { DATA_DIR: _unset, ...withoutDataDir } = env;
      const { result, stderr } = await adminWithOutput(
        { ...withoutDataDir, PORT: String(port) },
        elsewhere,
        "bootstrap",
        "--email",
        "new@acme.test",
        "--org",
        "Elsewhere",
      );
      expect(result.token).toMatch(/^dapi_/);
      if (env.DATABASE_URL) {
        expect(stderr).toMatch(/admin: PostgreSQL \S+@127\.0\.0\.1:5432\/t_\w+ \(DATABASE_URL\)/);
        expect(stderr).not.toContain("warning");
      } else {
        const folder = path.join(fs.realpathSync(elsewhere), "data");
        expect(stderr).toContain(
          `admin: embedded database in ${folder} (DATA_DIR is not set: ./data of the current folder; the folder did not exist and is created now)`,
        );
        expect(stderr).toContain(`admin: warning: a server is listening on port ${port}, but no server holds ${folder}`);
        expect(fs.existsSync(path.join(folder, "pglite"))).toBe(true);
      }
      // Nothing on PORT: no warning.
      await new Promise<void>((resolve) => listener.close(() => resolve()));
      const quiet = await adminWithOutput({ ...env, PORT: String(port) }, root, "token-create", "--email", "root@acme.test");
      expect(quiet.stderr).not.toContain("warning");
      if (!env.DATABASE_URL) expect(quiet.stderr).toContain(`admin: embedded database in ${dataDir} (DATA_DIR)`);
    } finally {
      listener.close();
      fs.rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it("explains bad arguments", async () => {
    await expect(admin("bootstrap", "--email", "not-an-email", "--org", "X")).rejects.toThrow(/email/);
    await expect(admin("frobnicate")).rejects.toThrow(/unknown command/);
  });
});
