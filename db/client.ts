/**
 * Opens Quire's database: PostgreSQL through postgres.js when a URL is given,
 * otherwise an embedded PGlite database in a data folder (or in memory).
 * Both run the same Drizzle schema and the same migrations.
 *
 * An embedded folder has one owner process at a time (db/embedded-owner.ts):
 * the server owns it and serves it on a Unix socket (db/embedded-socket.ts);
 * every other process (the CLI) connects through that socket with postgres.js,
 * or, when no server runs, opens the folder itself while holding the lock.
 */
import { createHash } from "node:crypto";
import { mkdirSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { PGlite } from "@electric-sql/pglite";
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import { migrate as migratePostgres } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import { withCommitHooks } from "./commit-hooks";
import { claimDataFolder, displayFolder, type OwnerRecord } from "./embedded-owner";
import { serveEmbeddedSocket } from "./embedded-socket";
import * as schema from "./schema";

export type Schema = typeof schema;
export type Database = PgDatabase<PgQueryResultHKT, Schema>;

export interface DatabaseHandle {
  db: Database;
  kind: "postgres" | "pglite";
  /**
   * Embedded database only: the Unix socket this process serves it on (the
   * owner), or the running server's socket it goes through (a client).
   */
  socket?: { role: "serving" | "through"; path: string };
  /** Applies pending migrations; safe to call from several processes at once. */
  migrate(): Promise<void>;
  /**
   * Calls `onNotify` for every NOTIFY on `channel` (from any process), and
   * also whenever the listening connection is (re)established, since
   * notifications sent while it was down are lost. Resolves to a stop function.
   */
  listen(channel: string, onNotify: () => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export const migrationsFolder = fileURLToPath(new URL("./migrations", import.meta.url));

/** Serialises concurrent migrators on one PostgreSQL server. */
const MIGRATION_LOCK_KEY = 4_711_2026;

export interface OpenDatabaseOptions {
  /** postgres:// URL; when absent PGlite is used. */
  url?: string;
  /**
   * PGlite data folder (`.quire/db`); absent = in memory. Its parent folder
   * (`.quire/`) holds the owner lock and the socket.
   */
  dataDir?: string;
  /**
   * With dataDir: "serve" makes this process the folder's owner and serves the
   * database on a Unix socket (`quire serve`; fails when another server owns
   * the folder). "use" (the default) goes through a running server's socket,
   * or opens the folder itself, holding the lock, when no server runs.
   */
  embedded?: "serve" | "use";
  /** postgres.js pool size. */
  maxConnections?: number;
}

export async function openDatabase(options: OpenDatabaseOptions): Promise<DatabaseHandle> {
  if (options.url) return openPostgres(options.url, options.maxConnections ?? 10);
  if (!options.dataDir) return openPglite(undefined);
  return openEmbeddedFolder(path.resolve(options.dataDir), options.embedded ?? "use");
}

/** Unix socket paths are limited to 107 bytes on Linux (103 on macOS); longer folders get a short path in the temp dir. */
const MAX_SOCKET_PATH_BYTES = 103;

export function embeddedSocketPath(folder: string): string {
  const inFolder = path.join(folder, "db.sock");
  if (Buffer.byteLength(inFolder) <= MAX_SOCKET_PATH_BYTES) return inFolder;
  const digest = createHash("sha256").update(folder).digest("hex").slice(0, 16);
  return path.join(os.tmpdir(), `quire-${digest}.sock`);
}

async function openEmbeddedFolder(dataDir: string, mode: "serve" | "use"): Promise<DatabaseHandle> {
  const folder = path.dirname(dataDir);
  mkdirSync(folder, { recursive: true });
  const onWait = (owner: OwnerRecord) => console.error(`Waiting for quire (pid ${owner.pid}) to finish with ${displayFolder(folder)} ...`);

  if (mode === "serve") {
    const socketPath = embeddedSocketPath(folder);
    const claim = await claimDataFolder(folder, "server", { socket: socketPath, onWait });
    if (claim.kind !== "held") throw new Error("unreachable: a server claim either holds the folder or fails");
    try {
      const { handle, client, notify } = await openPgliteClient(dataDir);
      try {
        // Migrated before anyone else can connect, so a CLI's migrate never races the server's.
        await handle.migrate();
        const socket = await serveEmbeddedSocket(client, socketPath, notify);
        return {
          ...handle,
          socket: { role: "serving", path: socketPath },
          async close() {
            try {
              await socket.close();
              await handle.close();
            } finally {
              claim.release();
            }
          },
        };
      } catch (error) {
        await handle.close();
        throw error;
      }
    } catch (error) {
      claim.release();
      throw error;
    }
  }

  const deadline = Date.now() + 60_000;
  let toldStarting = false;
  for (;;) {
    const claim = await claimDataFolder(folder, "cli", { onWait });
    if (claim.kind === "held") {
      try {
        const { handle } = await openPgliteClient(dataDir);
        return {
          ...handle,
          async close() {
            try {
              await handle.close();
            } finally {
              claim.release();
            }
          },
        };
      } catch (error) {
        claim.release();
        throw error;
      }
    }
    const socketPath = claim.owner.socket!;
    // Unnamed statements only: the owner's backend is one session shared by every client (see db/embedded-socket.ts).
    const client = postgres({ path: socketPath, max: 1, prepare: false, onnotice: () => {}, connect_timeout: 10 });
    try {
      await client`select 1`;
    } catch (error) {
      await client.end({ timeout: 0 });
      // The server is still opening the database, or stopping: look at the lock again (gone or stale once it has stopped).
      if (Date.now() < deadline) {
        if (!toldStarting)
          console.error(`Waiting for the Quire server (pid ${claim.owner.pid}) to serve ${displayFolder(folder)} on ${socketPath} ...`);
        toldStarting = true;
        await new Promise((resolve) => setTimeout(resolve, 200));
        continue;
      }
      throw new Error(
        `The Quire server (pid ${claim.owner.pid}) owns ${displayFolder(folder)} but its socket ${socketPath} does not answer: ${(error as Error).message}`,
      );
    }
    return throughServer(client, socketPath);
  }
}

/** A client of the running server's socket: the postgres.js driver as with DATABASE_URL, one connection. */
function throughServer(client: postgres.Sql, socketPath: string): DatabaseHandle {
  const drizzled = drizzlePostgres(client, { schema });
  const db = withCommitHooks(drizzled as unknown as Database);
  return {
    db,
    kind: "pglite",
    socket: { role: "through", path: socketPath },
    // The owner serialises every connection's transactions, so no advisory lock is needed.
    migrate: () => migratePostgres(drizzled, { migrationsFolder }),
    async listen() {
      throw new Error("LISTEN is for the process that owns the embedded database (the server).");
    },
    close: () => client.end(),
  };
}

/**
 * Drizzle sends every query through postgres.js's `unsafe` with prepare off
 * unless the query was given a name, and postgres.js then spends an extra
 * round trip asking the server for the parameter types of every statement.
 * Preparing every statement restores postgres.js's own default: each
 * connection parses a statement once and afterwards only binds and executes
 * it. The cache is per connection and goes with it (postgres.js recycles
 * connections after 30-60 minutes), and store code passes lists as one array
 * parameter, so the set of statement texts stays small.
 */
export function preparingEveryStatement(client: postgres.Sql): postgres.Sql {
  return new Proxy(client, {
    get(target, property, receiver) {
      if (property === "unsafe") {
        return (query: string, params?: postgres.ParameterOrJSON<never>[], options?: object) =>
          target.unsafe(query, params, { ...options, prepare: true });
      }
      if (property === "begin" || property === "savepoint") {
        return (...args: unknown[]) => {
          const body = args.pop() as (sql: postgres.Sql) => unknown;
          const method = Reflect.get(target, property) as (...a: unknown[]) => unknown;
          return Reflect.apply(method, target, [...args, (inner: postgres.Sql) => body(preparingEveryStatement(inner))]);
        };
      }
      return Reflect.get(target, property, receiver);
    },
  });
}

function openPostgres(url: string, max: number): DatabaseHandle {
  const client = postgres(url, { max, onnotice: () => {} });
  const db = withCommitHooks(drizzlePostgres(preparingEveryStatement(client), { schema }) as unknown as Database);
  return {
    db,
    kind: "postgres",
    async migrate() {
      const lockClient = postgres(url, { max: 1, onnotice: () => {} });
      try {
        await lockClient`select pg_advisory_lock(${MIGRATION_LOCK_KEY})`;
        await migratePostgres(drizzlePostgres(lockClient), { migrationsFolder });
        await lockClient`select pg_advisory_unlock(${MIGRATION_LOCK_KEY})`;
      } finally {
        await lockClient.end();
      }
    },
    async listen(channel, onNotify) {
      const { unlisten } = await client.listen(channel, onNotify, onNotify);
      return unlisten;
    },
    close: () => client.end(),
  };
}

async function openPglite(dataDir: string | undefined): Promise<DatabaseHandle> {
  return (await openPgliteClient(dataDir)).handle;
}

/**
 * PGlite in this process. `notify` delivers a notification that reached the
 * backend through the socket (in another client's exchange) to this
 * process's listeners, as the backend's own notifications are.
 */
async function openPgliteClient(dataDir: string | undefined) {
  if (dataDir) mkdirSync(path.dirname(dataDir), { recursive: true });
  // pg_trgm: full-text search suggests words for mistyped ones by trigram similarity, as on PostgreSQL (0009_search.sql).
  const client = new PGlite({ dataDir, extensions: { pg_trgm } });
  await client.waitReady;
  const db = withCommitHooks(drizzlePglite(client, { schema }) as unknown as Database);
  const listeners = new Map<string, Set<() => void>>();
  const handle: DatabaseHandle = {
    db,
    kind: "pglite",
    migrate: () => migratePglite(drizzlePglite(client), { migrationsFolder }),
    async listen(channel, onNotify) {
      const stop = await client.listen(channel, onNotify);
      const set = listeners.get(channel) ?? new Set();
      listeners.set(channel, set.add(onNotify));
      return async () => {
        set.delete(onNotify);
        await stop();
      };
    },
    close: () => client.close(),
  };
  const notify = (channel: string) => {
    for (const onNotify of listeners.get(channel) ?? []) onNotify();
  };
  return { handle, client, notify };
}
