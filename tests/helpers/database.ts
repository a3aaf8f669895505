/**
 * An isolated database per test file: a fresh PostgreSQL database on the
 * server named by TEST_DATABASE_URL / DATABASE_URL, or in-memory PGlite when
 * neither is set. Migrated, and dropped again on close.
 */
import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { type DatabaseHandle, openDatabase } from "@/db/client";

export const testDatabaseUrl = (): string | undefined => process.env.TEST_DATABASE_URL ?? process.env.DATABASE_URL;

/** A test database; `url` (PostgreSQL only) lets a test open a second handle on it, as another Quire process would. */
export type TestDatabase = DatabaseHandle & { url?: string };

export async function createTestDatabase(options: { maxConnections?: number } = {}): Promise<TestDatabase> {
  const serverUrl = testDatabaseUrl();
  if (!serverUrl) {
    const handle = await openDatabase({});
    await handle.migrate();
    return handle;
  }
  const name = `quire_test_${process.pid}_${randomBytes(4).toString("hex")}`;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${name}"`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const handle = await openDatabase({ url: url.toString(), maxConnections: options.maxConnections ?? 20 });
  await handle.migrate();
  return {
    ...handle,
    url: url.toString(),
    async close() {
      await handle.close();
      await admin.unsafe(`drop database if exists "${name}" with (force)`);
      await admin.end();
    },
  };
}
