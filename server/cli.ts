/**
 * The `quire` command line: serve, migrate, user add, token create.
 * Same data-dir / DATABASE_URL rules as `npm start`.
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { openDatabase } from "@/db/client";
import { addUser, issueApiToken } from "@/server/auth/accounts";
import { loadConfig } from "@/server/config";
import { isDomainError } from "@/server/core/errors";
import { ADMIN_USAGE, runAdminCommand } from "@/server/cli-admin";
import { stopWithin } from "@/server/http/deadlines";

const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

const USAGE = `Usage: quire <command> [options]

  serve [--port N] [--dev] [--no-web]
                                    Migrate the database and serve Quire (PORT, DATABASE_URL, QUIRE_DATA_DIR apply);
                                    --no-web serves only the APIs (MCP, tRPC, files), without the Next.js app and its build
  migrate                           Apply database migrations
  user add --email E --name N --password P
                                    Add a user (the first user owns the workspace)
  token create --email E [--label L] [--expires-in-days D]
                                    Create an API token; printed once, on the last line
${ADMIN_USAGE}
  mcp-proxy --url U --token T       MCP server on stdio forwarding to the Quire at U (QUIRE_URL, QUIRE_TOKEN apply);
                                    uploads local image files named by {blockType:"image",type:"file",path} blocks

Without DATABASE_URL, Quire uses an embedded database in QUIRE_DATA_DIR (default .quire/). The server owns it
and serves it to these commands on a Unix socket, so they work while it runs; without a server they open it themselves.`;

/** `serve` owns an embedded database folder; every other command uses it (through the server's socket when one runs). */
async function openConfiguredDatabase(embedded: "serve" | "use" = "use") {
  const config = loadConfig();
  const database = await openDatabase({ url: config.databaseUrl, dataDir: path.join(config.dataDir, "db"), embedded });
  try {
    await database.migrate();
  } catch (error) {
    await database.close();
    throw error;
  }
  return { config, database };
}

/** How long `serve` takes to stop at most: a supervisor waits for it, and one part that hangs (a database that stopped answering) must not keep the process up for ever. */
const STOP_DEADLINE_MS = 30_000;
/** Signals this close together are one: see `serve`'s stop. */
const SAME_SIGNAL_MS = 1_000;

function fail(message: string): never {
  console.error(message);
  process.exit(1);
}

async function main(argv: string[]): Promise<void> {
  const [command, subcommand] = argv;
  const options = {
    email: { type: "string" },
    name: { type: "string" },
    password: { type: "string" },
    label: { type: "string" },
    "expires-in-days": { type: "string" },
    port: { type: "string" },
    url: { type: "string" },
    token: { type: "string" },
    role: { type: "string" },
    id: { type: "string" },
    dev: { type: "boolean" },
    "no-web": { type: "boolean" },
    help: { type: "boolean", short: "h" },
  } as const;
  const { values } = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  if (!command || values.help) {
    console.log(USAGE);
    return;
  }

  if (command === "migrate") {
    const { database } = await openConfiguredDatabase();
    await database.close();
    console.log(
      `Migrations applied (${database.kind}${database.socket ? `, through the running server's socket ${database.socket.path}` : ""}).`,
    );
    return;
  }

  if (command === "serve") {
    // Loaded here only: the HTTP stack is most of the CLI's start-up time, and the other commands do not need it.
    const [{ startServer }, { createObjectStore }] = await Promise.all([import("@/server/http/server"), import("@/server/storage")]);
    const { config, database } = await openConfiguredDatabase("serve");
    const port = values.port ? Number(values.port) : config.port;
    const server = await startServer({
      database,
      port,
      host: config.host,
      authSecret: config.authSecret,
      objectStore: createObjectStore(config),
      publicUrl: config.publicUrl,
      siteUrl: config.siteUrl,
      maxUploadBytes: config.maxUploadBytes,
      trustProxy: config.trustProxy,
      redisUrl: config.redisUrl,
      email: config.email,
      // Development may send to plain http:// receivers; outside it, https only.
      mcpAllowedOrigins: config.mcpAllowedOrigins,
      outbound: { ...config.outbound, allowHttp: config.outbound.allowHttp || (values.dev ?? false) },
      next: values["no-web"] ? false : { dev: values.dev ?? false, dir: projectRoot },
    });
    let stopAskedAt: number | null = null;
    const stop = (signal: NodeJS.Signals) => {
      if (stopAskedAt !== null) {
        // A later signal while stopping is the operator's "now" (what is not stored yet stays with the live clients,
        // which hand it over when they reconnect). One within a moment is the same Ctrl-C: the terminal signals the
        // whole foreground group, and `npm start` forwards it too.
        if (performance.now() - stopAskedAt > SAME_SIGNAL_MS) process.exit(1);
        return;
      }
      stopAskedAt = performance.now();
      console.log(`Stopping (${signal}): finishing requests and storing live edits; signal again to stop at once.`);
      stopWithin(STOP_DEADLINE_MS, async () => {
        await server.close();
        await database.close();
      }).then(process.exit);
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
    // Said only once the signals are handled: a supervisor (or a test) that stops the server as soon as it reads this
    // line would otherwise meet the default handling, which ends the process there and then.
    const embedded = database.kind === "pglite" ? ` in ${config.dataDir}, served to \`quire\` commands on ${database.socket?.path}` : "";
    console.log(`Quire is serving ${server.url} (database: ${database.kind}${embedded})`);
    return;
  }

  if (command === "user" && subcommand === "add") {
    if (!values.email || !values.name || !values.password) fail("user add needs --email, --name and --password.");
    const { database } = await openConfiguredDatabase();
    try {
      const created = await addUser(database.db, { email: values.email, name: values.name, password: values.password }, new Date());
      console.log(`Added ${created.user.email} (${created.role}) with id ${created.user.id}`);
    } finally {
      await database.close();
    }
    return;
  }

  if (command === "token" && subcommand === "create") {
    if (!values.email) fail("token create needs --email.");
    const days = values["expires-in-days"] ? Number(values["expires-in-days"]) : undefined;
    if (days !== undefined && !(days > 0)) fail("--expires-in-days must be a positive number.");
    const { database } = await openConfiguredDatabase();
    try {
      const now = new Date();
      const expiresAt = days ? new Date(now.getTime() + days * 86_400_000) : undefined;
      const issued = await issueApiToken(database.db, { email: values.email, label: values.label, expiresAt }, now);
      console.log(`API token for ${values.email}${expiresAt ? `, expires ${expiresAt.toISOString()}` : ""}. It is shown only once:`);
      console.log(issued.token);
    } finally {
      await database.close();
    }
    return;
  }

  if (command === "mcp-proxy") {
    const { proxy } = loadConfig();
    const url = values.url ?? proxy.url;
    const token = values.token ?? proxy.token;
    if (!url || !token) fail("mcp-proxy needs --url (or QUIRE_URL) and --token (or QUIRE_TOKEN).");
    if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol))
      fail(`mcp-proxy: --url must be an http(s) URL, not ${JSON.stringify(url)}.`);
    const { runStdioProxy } = await import("@/server/mcp/stdio-proxy");
    await runStdioProxy({ url, token });
    process.exit(0);
  }

  if (await runAdminCommand(command, subcommand, values, openConfiguredDatabase, fail)) return;

  fail(`Unknown command: ${argv.join(" ")}\n\n${USAGE}`);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (isDomainError(error)) fail(`${error.code}: ${error.message}`);
  fail(error instanceof Error ? error.message : String(error));
});
