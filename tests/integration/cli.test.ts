/** The `quire` command line, run as a user runs it: a child process against its own database. */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { openDatabase } from "@/db/client";
import { startServer } from "@/server/http/server";
import { testDatabaseUrl } from "../helpers/database";
import { projectRoot } from "../helpers/server";
import { loadConfig } from "@/server/config";
import { createObjectStore } from "@/server/storage";

const run = promisify(execFile);
let env: NodeJS.ProcessEnv;
let cleanup: () => Promise<void>;
let databaseUrl: string | undefined;
let dataDir: string;

async function quire(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [path.join(projectRoot, "bin", "quire.js"), ...args], { env, cwd: projectRoot });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const lastLine = (text: string) => text.trim().split("\n").at(-1)!;

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(tmpdir(), "quire-cli-"));
  const serverUrl = testDatabaseUrl();
  env = { ...process.env, QUIRE_DATA_DIR: dataDir, DATABASE_URL: undefined, TEST_DATABASE_URL: undefined };
  if (serverUrl) {
    const name = `quire_test_cli_${randomBytes(4).toString("hex")}`;
    const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database "${name}"`);
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    databaseUrl = url.toString();
    env.DATABASE_URL = databaseUrl;
    cleanup = async () => {
      await admin.unsafe(`drop database if exists "${name}" with (force)`);
      await admin.end();
    };
  } else {
    cleanup = async () => {};
  }
});

afterAll(async () => {
  await cleanup();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("quire CLI", () => {
  let token: string;

  test("migrate applies migrations (and again is a no-op)", async () => {
    for (let i = 0; i < 2; i++) {
      const result = await quire("migrate");
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/Migrations applied/);
    }
  });

  test("user add: the first user owns the workspace, later users are members; bad input fails clearly", async () => {
    const first = await quire("user", "add", "--email", "Ada@Example.test", "--name", "Ada", "--password", "a long password");
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/ada@example\.test \(owner\)/);
    const second = await quire("user", "add", "--email", "bob@example.test", "--name", "Bob", "--password", "another password");
    expect(second.stdout).toMatch(/\(member\)/);
    const duplicate = await quire("user", "add", "--email", "ada@example.test", "--name", "Ada 2", "--password", "a long password");
    expect(duplicate.code).toBe(1);
    expect(duplicate.stderr).toMatch(/EMAIL_TAKEN/);
    const short = await quire("user", "add", "--email", "c@example.test", "--name", "C", "--password", "short");
    expect(short.code).toBe(1);
    expect(short.stderr).toMatch(/VALIDATION_FAILED.*password/);
    const missing = await quire("user", "add", "--email", "d@example.test");
    expect(missing.code).toBe(1);
  });

  test("token create prints the token on the last line; list shows it without the secret; revoke stops it", async () => {
    const created = await quire("token", "create", "--email", "ada@example.test", "--label", "agent");
    expect(created.code).toBe(0);
    token = lastLine(created.stdout);
    expect(token).toMatch(/^qk_[A-Za-z0-9_-]{43}$/);
    const unknown = await quire("token", "create", "--email", "nobody@example.test");
    expect(unknown.code).toBe(1);

    const listed = await quire("token", "list", "--email", "ada@example.test");
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain("agent");
    expect(listed.stdout).not.toContain(token);

    // The token works against a server on the same database…
    const database = await openDatabase(databaseUrl ? { url: databaseUrl } : { dataDir: path.join(dataDir, "db") });
    const server = await startServer({ database, port: 0, host: "127.0.0.1", next: false, objectStore: createObjectStore(loadConfig()) });
    const mcpCall = () =>
      fetch(`${server.url}/api/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", authorization: `Bearer ${token}` },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
      });
    try {
      expect((await mcpCall()).status).toBe(200);
      if (databaseUrl) {
        // …and, revoked from the CLI while the server runs, stops at once (PGlite allows one process at a time).
        const tokenId = /([0-9a-f-]{36})/.exec(listed.stdout)![1]!;
        expect((await quire("token", "revoke", "--id", tokenId)).code).toBe(0);
        expect((await mcpCall()).status).toBe(401);
      }
    } finally {
      await server.close();
      await database.close();
    }
  });

  test("invite create prints a link; unknown commands print usage and fail", async () => {
    const invite = await quire("invite", "create", "--role", "member");
    expect(invite.code).toBe(0);
    expect(lastLine(invite.stdout)).toMatch(/^http:\/\/localhost:\d+\/invite\/[A-Za-z0-9_-]+$/);
    const unknown = await quire("frobnicate");
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/Usage: quire/);
  });
});
