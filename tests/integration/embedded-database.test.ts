/**
 * One owner of the embedded database: a real `quire serve` process on an
 * embedded PGlite folder (no DATABASE_URL), with `quire` commands run as child
 * processes while it runs, restarts after SIGTERM and kill -9, and a second
 * server on the same folder.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createTRPCClient, httpLink } from "@trpc/client";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { AppRouter } from "@/server/api/router";
import { callMcp, projectRoot } from "../helpers/server";

const run = promisify(execFile);
const quireBin = path.join(projectRoot, "bin", "quire.js");

let dataDir: string;
let env: NodeJS.ProcessEnv;
const cleanups: Array<() => void> = [];

interface Served {
  child: ChildProcess;
  url: string;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** The environment of every child: the embedded database in `folder`, and nothing of the test's own database. */
function childEnv(folder: string): NodeJS.ProcessEnv {
  const { DATABASE_URL: _a, TEST_DATABASE_URL: _b, QUIRE_S3_BUCKET: _c, ...rest } = process.env;
  return { ...rest, QUIRE_DATA_DIR: folder, HOST: "127.0.0.1", PORT: "0", NODE_ENV: "production" };
}

async function serve(environment = env): Promise<Served> {
  const child = spawn(process.execPath, [quireBin, "serve", "--no-web", "--port", "0"], {
    env: environment,
    cwd: projectRoot,
    stdio: ["ignore", "pipe", "pipe"],
  });
  cleanups.push(() => child.kill("SIGKILL"));
  let output = "";
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`quire serve did not start:\n${output}`)), 90_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /Quire is serving (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`quire serve exited (${code ?? signal}):\n${output}`));
    });
  });
  return { child, url, output: () => output, exited };
}

async function stop(server: Served, signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  server.child.kill(signal);
  return server.exited;
}

async function quire(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return quireIn(env, ...args);
}

async function quireIn(environment: NodeJS.ProcessEnv, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [quireBin, ...args], { env: environment, cwd: projectRoot, timeout: 30_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const lastLine = (text: string) => text.trim().split("\n").at(-1)!;

/** `token list` output as "id label status" per token (last-used times change). */
const tokenSummary = (listing: string) =>
  listing
    .trim()
    .split("\n")
    .slice(1)
    .map((line) => {
      const [id, label] = line.split(/\s+/);
      return `${id} ${label} ${line.includes("revoked") ? "revoked" : "active"}`;
    });

function owner(folder = dataDir): { pid: number; role: string; socket: string | null } | null {
  const file = path.join(folder, "owner.lock");
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as { pid: number; role: string; socket: string | null }) : null;
}

async function mcpClient(url: string, token: string): Promise<Client> {
  const client = new Client({ name: "embedded-database-test", version: "1.0.0" });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${url}/api/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  return client;
}

function trpc(url: string, token: string) {
  return createTRPCClient<AppRouter>({ links: [httpLink({ url: `${url}/api/trpc`, headers: { authorization: `Bearer ${token}` } })] });
}

/** A raw MCP request with a bearer token: its HTTP status. */
async function mcpStatus(url: string, token: string): Promise<number> {
  const response = await fetch(`${url}/api/mcp`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
  });
  await response.body?.cancel();
  return response.status;
}

type DocRead = { documentId: string; path: string; sections: Array<{ name: string; content: unknown; contentHash: string }> };

beforeAll(() => {
  dataDir = mkdtempSync(path.join(tmpdir(), "quire-embedded-"));
  env = childEnv(dataDir);
});

afterAll(() => {
  for (const cleanup of cleanups) cleanup();
  rmSync(dataDir, { recursive: true, force: true });
});

// Each test runs child processes (a server, CLI commands, restarts): alone the first takes 35 s of the default 60, and
// CI runs other files beside it.
describe("one owner of the embedded database", { timeout: 150_000 }, () => {
  let server: Served;
  let adaToken: string;
  let bobToken: string;
  let revokedToken: string;
  const documentIds: string[] = [];

  test("the server owns the folder; user add, token create, migrate and invite create work through its socket", async () => {
    server = await serve();

    const ada = await quire("user", "add", "--email", "ada@example.test", "--name", "Ada", "--password", "a long password");
    expect(ada.stderr).toBe("");
    expect(ada.stdout).toMatch(/ada@example\.test \(owner\)/);
    adaToken = lastLine((await quire("token", "create", "--email", "ada@example.test", "--label", "agent")).stdout);
    expect(adaToken).toMatch(/^qk_/);

    // The token works at once, over MCP…
    const mcp = await mcpClient(server.url, adaToken);
    const created = await callMcp<{ documentId: string }>(mcp, "documents", {
      action: "create",
      path: "notes/first",
      sections: [{ name: "One", content: [{ blockType: "text", text: "written while the CLI ran" }] }],
    });
    documentIds.push(created.documentId);
    await mcp.close();

    // …and a user added while the server runs can use a token over tRPC HTTP (meanwhile: migrate and invite create).
    const bob = (async () => {
      expect((await quire("user", "add", "--email", "bob@example.test", "--name", "Bob", "--password", "another password")).stdout).toMatch(
        /\(member\)/,
      );
      bobToken = lastLine((await quire("token", "create", "--email", "bob@example.test")).stdout);
      const members = await trpc(server.url, bobToken).members.query({ action: "list" });
      expect(members.members.map((m) => m.email).sort()).toEqual(["ada@example.test", "bob@example.test"]);
    })();
    const [migrated, invite] = await Promise.all([
      quire("migrate"),
      quire("invite", "create", "--role", "member", "--email", "cleo@example.test"),
      bob,
    ]);
    expect(migrated.code).toBe(0);
    expect(migrated.stdout).toContain(`through the running server's socket ${path.join(dataDir, "db.sock")}`);
    expect(invite.code).toBe(0);
    expect(lastLine(invite.stdout)).toMatch(/\/invite\/[A-Za-z0-9_-]+$/);
    expect(owner()).toMatchObject({ pid: server.child.pid, role: "server", socket: path.join(dataDir, "db.sock") });
  });

  test("token revoke from the CLI reaches the server's token cache: the next request gets 401", async () => {
    revokedToken = lastLine((await quire("token", "create", "--email", "ada@example.test", "--label", "doomed")).stdout);
    // Used twice, so the server has it in its cache of live tokens.
    expect(await mcpStatus(server.url, revokedToken)).toBe(200);
    expect(await mcpStatus(server.url, revokedToken)).toBe(200);
    const listed = (await quire("token", "list", "--email", "ada@example.test")).stdout;
    const id = listed
      .split("\n")
      .find((line) => line.includes("doomed"))!
      .split(/\s+/)[0]!;
    expect((await quire("token", "revoke", "--id", id)).code).toBe(0);
    expect(await mcpStatus(server.url, revokedToken)).toBe(401);
    expect(await mcpStatus(server.url, adaToken)).toBe(200);
  });

  test("CLI transactions and the server's own writes do not interleave: everything from both sides is kept", async () => {
    const mcp = await mcpClient(server.url, adaToken);
    const writes = Array.from({ length: 12 }, (_, i) =>
      callMcp<{ documentId: string }>(mcp, "documents", {
        action: "create",
        path: `busy/doc-${i}`,
        sections: [{ name: "Body", content: [{ blockType: "text", text: `document ${i}` }] }],
      }),
    );
    const users = ["dan", "eve", "fay"].map((name) =>
      quire("user", "add", "--email", `${name}@example.test`, "--name", name, "--password", "a long password"),
    );
    const [written, added] = await Promise.all([Promise.all(writes), Promise.all(users)]);
    expect(added.map((r) => r.code)).toEqual([0, 0, 0]);
    documentIds.push(...written.map((w) => w.documentId));
    const listed = await callMcp<{ documents: unknown[] }>(mcp, "documents", { action: "list", limit: 100 });
    expect(listed.documents).toHaveLength(13);
    const members = await callMcp<{ members: unknown[] }>(mcp, "members", { action: "list" });
    expect(members.members).toHaveLength(5);
    await mcp.close();
  });

  test("after SIGTERM and a restart every document, user and token is still there", async () => {
    const mcp = await mcpClient(server.url, adaToken);
    const before = await Promise.all(documentIds.map((documentId) => callMcp<DocRead>(mcp, "read", { documentId })));
    await mcp.close();
    const tokensBefore = (await quire("token", "list", "--email", "ada@example.test")).stdout;

    expect(await stop(server, "SIGTERM")).toEqual({ code: 0, signal: null });
    expect(owner()).toBeNull();
    expect(existsSync(path.join(dataDir, "db.sock"))).toBe(false);

    server = await serve();
    const again = await mcpClient(server.url, adaToken);
    const after = await Promise.all(documentIds.map((documentId) => callMcp<DocRead>(again, "read", { documentId })));
    expect(after).toEqual(before);
    const members = await callMcp<{ members: Array<{ email: string }> }>(again, "members", { action: "list" });
    expect(members.members).toHaveLength(5);
    await again.close();
    expect(await mcpStatus(server.url, bobToken)).toBe(200);
    expect(await mcpStatus(server.url, revokedToken)).toBe(401);
    const tokensAfter = (await quire("token", "list", "--email", "ada@example.test")).stdout;
    expect(tokenSummary(tokensAfter)).toEqual(tokenSummary(tokensBefore));
    expect(tokenSummary(tokensAfter)).toHaveLength(2);
  });

  test("a second server on the same folder refuses with a clear message and leaves the first alone", async () => {
    const second = await quire("serve", "--no-web", "--port", "0");
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`Another Quire server (pid ${server.child.pid}) is using ${dataDir}/`);
    expect(owner()?.pid).toBe(server.child.pid);
    expect(await mcpStatus(server.url, adaToken)).toBe(200);
  });

  test("after kill -9 the stale lock does not block a restart, and the data is still there", async () => {
    const killedPid = server.child.pid;
    expect(await stop(server, "SIGKILL")).toEqual({ code: null, signal: "SIGKILL" });
    expect(owner()?.pid).toBe(killedPid);

    server = await serve();
    expect(owner()?.pid).toBe(server.child.pid);
    const mcp = await mcpClient(server.url, adaToken);
    const listed = await callMcp<{ documents: unknown[] }>(mcp, "documents", { action: "list", limit: 100 });
    expect(listed.documents).toHaveLength(13);
    await mcp.close();
    expect((await quire("token", "create", "--email", "bob@example.test", "--label", "after-crash")).code).toBe(0);
  });

  test("Ctrl-C under `npm start` (SIGINT from the terminal, and again as forwarded) stops it gracefully", async () => {
    // The terminal signals the whole foreground group, and `npm start` forwards the signal to the server as well:
    // the same Ctrl-C arrives twice within a moment, and must not count as a second, "stop at once" one.
    server.child.kill("SIGINT");
    server.child.kill("SIGINT");
    expect(await server.exited).toEqual({ code: 0, signal: null });
    expect(server.output()).toContain("Stopping (SIGINT)");
    expect(owner()).toBeNull();
    server = await serve();
  });

  test("without a server the CLI opens the folder itself, holding the lock only while it runs", async () => {
    expect(await stop(server, "SIGTERM")).toEqual({ code: 0, signal: null });
    const listed = await quire("token", "list", "--email", "bob@example.test");
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain("after-crash");
    expect(owner()).toBeNull();
  });

  test("a data folder whose socket path would be too long gets a short socket under the temp dir", async () => {
    const deep = path.join(dataDir, "a-rather-long-folder-name-".repeat(4), "quire-data");
    mkdirSync(deep, { recursive: true });
    // A copy of the database the server above left (saves creating one).
    cpSync(path.join(dataDir, "db"), path.join(deep, "db"), { recursive: true });
    const deepEnv = childEnv(deep);
    const deepServer = await serve(deepEnv);
    const socket = owner(deep)!.socket!;
    expect(path.dirname(socket)).toBe(tmpdir());
    expect(existsSync(socket)).toBe(true);
    const added = await quireIn(deepEnv, "user", "add", "--email", "deep@example.test", "--name", "Deep", "--password", "a long password");
    expect(added.stdout).toMatch(/\(member\)/);
    const mcp = await mcpClient(deepServer.url, adaToken);
    const members = await callMcp<{ members: unknown[] }>(mcp, "members", { action: "list" });
    expect(members.members).toHaveLength(6);
    await mcp.close();
    expect(await stop(deepServer, "SIGTERM")).toEqual({ code: 0, signal: null });
    expect(existsSync(socket)).toBe(false);
  });
});
