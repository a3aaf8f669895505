/**
 * Runs the official MCP conformance suite (`@modelcontextprotocol/conformance`)
 * against a started Quire and records which scenarios pass.
 *
 *   npx tsx bench/mcp-conformance.ts            # PostgreSQL at DATABASE_URL or postgres://postgres@127.0.0.1:5432/postgres
 *   CONFORMANCE_SCENARIO=tools-list npx tsx bench/mcp-conformance.ts   # one server scenario
 *   CONFORMANCE_VERSION=0.1.16 npx tsx bench/mcp-conformance.ts        # another release of the suite
 *   CONFORMANCE_OUT=/tmp/conformance npx tsx bench/mcp-conformance.ts  # keep the suite's result files there
 *
 * The suite needs Node 22; Quire runs on Node 20. So the suite (and only the
 * suite) runs under the `node@22` npm package, fetched by npx
 * (`npx -p node@22 -p @modelcontextprotocol/conformance@…`), while Quire runs
 * in this process on the project's Node.
 *
 * What it does: a scratch database (dropped at the end), Quire on a free
 * loopback port, one person with an API token and a small document (so there
 * is something to list), then
 * - the server scenarios of the spec revision the SDK speaks
 *   (`conformance server --requirements 2025-11-25`). The suite's
 *   server runner connects without credentials and has no option to send any,
 *   so it talks to Quire through a loopback relay that forwards every request
 *   unchanged (Host and Origin included: the DNS-rebinding scenario depends on
 *   them) and adds the token's `Authorization` header, as a configured client
 *   would;
 * - the authorization server scenarios (`conformance authorization`), directly
 *   against Quire, when Quire serves OAuth Authorization Server Metadata: a
 *   client registered (RFC 7591) for the suite's callback server, and the
 *   run's person, signed in, allowing it on the consent page when the suite
 *   prints the URL a person would open.
 *
 * Each scenario is then put in one of three rows: passed (every check passed),
 * failed, or not offered: scenarios that exercise a feature Quire does not
 * have (the suite's fixture tools such as `test_simple_text`, prompts,
 * logging, completion, sampling, elicitation, server-sent event streams of a
 * stateful server, tasks). A scenario that fails for a feature Quire offers
 * makes the script exit 1.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { createServer, request } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { encode } from "next-auth/jwt";
import { loadConfig } from "@/server/config";
import { addUser, ensureAuthSecret, issueApiToken } from "@/server/auth/accounts";
import { sessionCookieName } from "@/server/auth/web-session";
import { actorForUser } from "@/server/access/actor";
import { startServer } from "@/server/http/server";
import { createObjectStore } from "@/server/storage";
import { toolsByName } from "@/server/actions/registry";
import { runTool } from "@/server/actions/tool";
import { scratchDatabase } from "./scratch-database";

const SUITE_VERSION = process.env.CONFORMANCE_VERSION ?? "0.2.0-alpha.12";
const NODE_PACKAGE = "node@22";
/**
 * The newest spec revision the MCP SDK Quire runs on speaks: the suite runs exactly the scenarios it requires (a
 * later, draft revision's scenarios would only report that the SDK refuses that protocol version).
 */
const SPEC_VERSION = process.env.CONFORMANCE_SPEC_VERSION ?? "2025-11-25";

/**
 * Scenarios for features Quire does not offer, by why: they call the suite's
 * own fixture tools, prompts and resources (the "everything server"), or
 * protocol features a stateless document server has no use for.
 */
const NOT_OFFERED: Array<[RegExp, string]> = [
  [/^tools-call-/, "calls the suite's fixture tools (test_simple_text, …)"],
  [/^json-schema-2020-12$/, "calls the suite's fixture tool json_schema_2020_12_tool"],
  [/^prompts-/, "Quire offers no prompts"],
  [/^logging-set-level$/, "Quire offers no logging capability"],
  [/^completion-complete$/, "Quire offers no completions"],
  [/^elicitation-/, "Quire never asks the client (no elicitation)"],
  [/^input-required-result-/, "Quire never asks the client (no sampling, elicitation or roots requests)"],
  [/^tasks-/, "Quire offers no tasks (extension)"],
  [/^sep-2640-skills-/, "Quire offers no skills (extension)"],
  [
    /^server-sse-/,
    "resumable SSE (event ids, Last-Event-ID polling): Quire answers POSTs with JSON and its GET stream carries only resource notifications",
  ],
  [/^server-session-lifecycle$/, "a stateless server issues no sessions"],
  [/^resources-read-(text|binary)$/, "reads the suite's fixture resources (test://static-text, test://static-binary)"],
  [/^resources-templates-read$/, "reads the suite's fixture template (test://template/{id}/data)"],
  [/^resources-(subscribe|unsubscribe)$/, "subscribes to the suite's fixture resource (test://static-text)"],
];

interface ScenarioResult {
  scenario: string;
  passed: number;
  warnings: number;
  failed: number;
  failures: string[];
}

/** The relay the server scenarios go through: the request as sent, plus the token. */
async function startAuthRelay(target: URL, token: string) {
  const relay = createServer((req, res) => {
    const headers = { ...req.headers };
    headers.authorization ??= `Bearer ${token}`;
    const forwarded = request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forwarded.on("error", () => res.destroy());
    req.pipe(forwarded);
  });
  await new Promise<void>((resolve) => relay.listen(0, "127.0.0.1", resolve));
  const { port } = relay.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise<void>((resolve) => relay.close(() => resolve())) };
}

/**
 * Runs the suite under Node 22; resolves with its exit code (its output goes to this process's stderr). `onLine`, when
 * given, also sees each line of its standard output as it comes (the authorization scenarios print a URL to open).
 */
function runSuite(args: string[], onLine?: (line: string) => void): Promise<number> {
  const child = spawn(
    "npx",
    ["-y", "-p", NODE_PACKAGE, "-p", `@modelcontextprotocol/conformance@${SUITE_VERSION}`, "conformance", ...args],
    { stdio: ["ignore", onLine ? "pipe" : "inherit", "inherit"], env: { ...process.env, npm_config_loglevel: "error" } },
  );
  if (onLine && child.stdout) {
    child.stdout.pipe(process.stdout);
    createInterface({ input: child.stdout }).on("line", onLine);
  }
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => resolve(code ?? 1));
  });
}

/** A loopback port free a moment ago: where the suite's OAuth callback server listens. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/**
 * What a person does with the authorization URL the suite prints: opens it (Quire sends them to its consent page),
 * allows the client from that page with their session, and follows the redirect back to the suite's callback server.
 */
async function consentInPerson(authorizationUrl: string, siteUrl: string, cookie: string): Promise<void> {
  const started = await fetch(authorizationUrl, { redirect: "manual" });
  const consent = new URL(started.headers.get("location") ?? "", siteUrl);
  const form = new URLSearchParams(consent.search);
  form.set("decision", "allow_write");
  const answered = await fetch(`${siteUrl}/oauth/authorize/decision`, {
    method: "POST",
    redirect: "manual",
    headers: { cookie, origin: siteUrl, "content-type": "application/x-www-form-urlencoded" },
    body: form,
  });
  await fetch(answered.headers.get("location") ?? "");
}

/** The suite writes one directory per scenario (`<mode>-<scenario>-<timestamp>`), each with checks.json. */
function readResults(outputDir: string, mode: string): ScenarioResult[] {
  const results: ScenarioResult[] = [];
  for (const entry of readdirSync(outputDir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const file = path.join(outputDir, entry.name, "checks.json");
    let checks: Array<{ id?: string; name?: string; status: string; errorMessage?: string }>;
    try {
      checks = JSON.parse(readFileSync(file, "utf8"));
    } catch {
      continue;
    }
    const scenario = entry.name.replace(new RegExp(`^${mode}-`), "").replace(/-\d{4}-\d{2}-\d{2}T.*$/, "");
    const failing = checks.filter((check) => check.status === "FAILURE");
    results.push({
      scenario,
      passed: checks.filter((check) => check.status === "SUCCESS").length,
      warnings: checks.filter((check) => check.status === "WARNING").length,
      failed: failing.length,
      failures: failing.map((check) => `${check.id ?? check.name}: ${check.errorMessage ?? ""}`.trim()),
    });
  }
  return results.sort((a, b) => a.scenario.localeCompare(b.scenario));
}

const notOfferedReason = (scenario: string) => NOT_OFFERED.find(([pattern]) => pattern.test(scenario))?.[1];

async function main() {
  const scratch = await scratchDatabase(`quire_bench_conformance_${Date.now()}`);
  const config = loadConfig();
  const server = await startServer({
    database: scratch.database,
    port: 0,
    host: "127.0.0.1",
    next: false,
    objectStore: createObjectStore(config),
  });
  const outputRoot = process.env.CONFORMANCE_OUT ?? mkdtempSync(path.join(os.tmpdir(), "quire-conformance-"));
  let relay: Awaited<ReturnType<typeof startAuthRelay>> | undefined;
  let failedOffered = 0;
  try {
    const { db } = scratch.database;
    const now = new Date();
    const person = await addUser(db, { email: "conformance@example.test", name: "Conformance", password: "correct horse battery" }, now);
    const { token } = await issueApiToken(db, { email: "conformance@example.test", label: "conformance" }, now);
    const actor = (await actorForUser(db, person.user.id, "person"))!;
    await runTool(
      toolsByName.documents,
      { db, actor, clock: () => new Date(), files: server.files, live: server.live },
      {
        action: "create",
        path: "conformance/readme",
        name: "Conformance",
        sections: [{ name: "Intro", content: [{ blockType: "text", text: "A document for the conformance run." }] }],
      },
    );
    relay = await startAuthRelay(new URL(server.url), token);

    const rows: Array<{ mode: string; result: ScenarioResult; verdict: "passed" | "failed" | "not offered"; why?: string }> = [];
    const serverOut = path.join(outputRoot, "server");
    const scenario = process.env.CONFORMANCE_SCENARIO;
    await runSuite([
      "server",
      "--url",
      `${relay.url}/api/mcp`,
      "-o",
      serverOut,
      ...(scenario ? ["--scenario", scenario] : ["--requirements", SPEC_VERSION]),
    ]);
    for (const result of readResults(serverOut, "server")) {
      const why = notOfferedReason(result.scenario);
      // A fixture scenario can "pass" against any isError answer (Quire's unknown-tool error); it tests nothing of Quire's.
      rows.push({ mode: "server", result, verdict: why ? "not offered" : result.failed === 0 ? "passed" : "failed", why });
    }

    const metadata = await fetch(`${server.url}/.well-known/oauth-authorization-server`);
    if (metadata.ok && !scenario) {
      const { issuer, registration_endpoint } = (await metadata.json()) as { issuer: string; registration_endpoint: string };
      // The authorization code scenario needs a client registered for its callback server, and a person to allow it:
      // the run's person, signed in, answers Quire's consent page for the URL the suite prints.
      const callbackPort = await freePort();
      const registered = await fetch(registration_endpoint, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          client_name: "MCP conformance suite",
          redirect_uris: [`http://127.0.0.1:${callbackPort}/callback`],
          token_endpoint_auth_method: "none",
        }),
      });
      const { client_id: clientId } = (await registered.json()) as { client_id: string };
      const session = await encode({ token: { sub: person.user.id }, secret: await ensureAuthSecret(db, undefined) });
      const cookie = `${sessionCookieName(false)}=${session}`;
      const consents: Promise<void>[] = [];
      const authOut = path.join(outputRoot, "authorization");
      await runSuite(
        [
          "authorization",
          "--url",
          issuer,
          "--resource",
          `${server.url}/api/mcp`,
          "--client-id",
          clientId,
          "--port",
          String(callbackPort),
          "-o",
          authOut,
          "--spec-version",
          SPEC_VERSION,
        ],
        (line) => {
          if (line.startsWith(`${issuer}/oauth/authorize?`)) consents.push(consentInPerson(line, server.url, cookie));
        },
      );
      await Promise.all(consents);
      for (const result of readResults(authOut, "authorization")) {
        rows.push({ mode: "authorization", result, verdict: result.failed === 0 ? "passed" : "failed" });
      }
    }

    console.log(`\n@modelcontextprotocol/conformance@${SUITE_VERSION} against Quire ${server.url} (results in ${outputRoot})\n`);
    console.log("| Mode | Scenario | Checks passed | Warnings | Checks failed | Verdict |");
    console.log("|---|---|---:|---:|---:|---|");
    for (const { mode, result, verdict, why } of rows) {
      console.log(
        `| ${mode} | ${result.scenario} | ${result.passed} | ${result.warnings} | ${result.failed} | ${verdict}${why ? ` (${why})` : ""} |`,
      );
    }
    const failed = rows.filter((row) => row.verdict === "failed");
    failedOffered = failed.length;
    for (const { result } of failed) console.log(`\n${result.scenario}:\n  ${result.failures.join("\n  ")}`);
    const count = (verdict: string) => rows.filter((row) => row.verdict === verdict).length;
    console.log(`\n${count("passed")} passed, ${count("failed")} failed, ${count("not offered")} not offered (of ${rows.length}).`);
  } finally {
    await relay?.close();
    await server.close();
    await scratch.drop();
  }
  process.exit(failedOffered === 0 ? 0 : 1);
}

await main();
