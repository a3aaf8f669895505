/**
 * A database of its own for one bench run, on the PostgreSQL server at
 * DATABASE_URL (default: the local one), migrated; `drop` closes and drops it.
 */
import postgres from "postgres";
import { type DatabaseHandle, openDatabase } from "@/db/client";

export const BENCH_SERVER_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

export async function scratchDatabase(name: string): Promise<{ database: DatabaseHandle; url: string; drop(): Promise<void> }> {
  const admin = postgres(BENCH_SERVER_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${name}"`);
  return openMigrated(name, async () => {
    await admin.unsafe(`drop database if exists "${name}" with (force)`);
    await admin.end();
  });
}

/**
 * A database kept between runs (a bench's seeded corpus, to rerun its measurements without seeding again): created
 * and migrated when missing; `created` says whether it was. `drop` only closes it.
 */
export async function keptDatabase(
  name: string,
): Promise<{ database: DatabaseHandle; url: string; created: boolean; drop(): Promise<void> }> {
  const admin = postgres(BENCH_SERVER_URL, { max: 1, onnotice: () => {} });
  const [existing] = await admin`select 1 from pg_database where datname = ${name}`;
  if (!existing) await admin.unsafe(`create database "${name}"`);
  await admin.end();
  const opened = await openMigrated(name, async () => {});
  return { ...opened, created: !existing };
}

async function openMigrated(
  name: string,
  dropped: () => Promise<void>,
): Promise<{ database: DatabaseHandle; url: string; drop(): Promise<void> }> {
  const url = new URL(BENCH_SERVER_URL);
  url.pathname = `/${name}`;
  const database = await openDatabase({ url: url.toString() });
  await database.migrate();
  return {
    database,
    url: url.toString(),
    async drop() {
      await database.close();
      await dropped();
    },
  };
}
