/**
 * Opens Quire's database: PostgreSQL through postgres.js when a URL is given,
 * otherwise an embedded PGlite database in a data folder (or in memory).
 * Both run the same Drizzle schema and the same migrations.
 */
import { mkdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { PGlite } from "@electric-sql/pglite";
import type { PgDatabase, PgQueryResultHKT } from "drizzle-orm/pg-core";
import { drizzle as drizzlePglite } from "drizzle-orm/pglite";
import { migrate as migratePglite } from "drizzle-orm/pglite/migrator";
import { drizzle as drizzlePostgres } from "drizzle-orm/postgres-js";
import { migrate as migratePostgres } from "drizzle-orm/postgres-js/migrator";
import postgres from "postgres";
import * as schema from "./schema";

export type Schema = typeof schema;
export type Database = PgDatabase<PgQueryResultHKT, Schema>;

export interface DatabaseHandle {
  db: Database;
  kind: "postgres" | "pglite";
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
  /** PGlite data folder; absent = in memory. */
  dataDir?: string;
  /** postgres.js pool size. */
  maxConnections?: number;
}

export async function openDatabase(options: OpenDatabaseOptions): Promise<DatabaseHandle> {
  if (options.url) return openPostgres(options.url, options.maxConnections ?? 10);
  return openPglite(options.dataDir);
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
        return (query: string, params?: unknown[], options?: object) =>
          target.unsafe(query, params as never, { ...options, prepare: true });
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
  const db = drizzlePostgres(preparingEveryStatement(client), { schema }) as unknown as Database;
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
  if (dataDir) mkdirSync(path.dirname(dataDir), { recursive: true });
  const client = new PGlite(dataDir);
  await client.waitReady;
  const db = drizzlePglite(client, { schema }) as unknown as Database;
  return {
    db,
    kind: "pglite",
    migrate: () => migratePglite(drizzlePglite(client), { migrationsFolder }),
    async listen(channel, onNotify) {
      const stop = await client.listen(channel, onNotify);
      return async () => stop();
    },
    close: () => client.close(),
  };
}
