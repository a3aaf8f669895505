/** The handle store functions take: the database itself or an open transaction on it. */
import { type SQL, sql } from "drizzle-orm";
import type { PgColumn } from "drizzle-orm/pg-core";
import type { Database } from "@/db/client";

export type Tx = Database | Parameters<Parameters<Database["transaction"]>[0]>[0];

/** Runs raw SQL and returns its rows, whichever driver is underneath. */
export async function queryRows<T>(tx: Tx, query: Parameters<Tx["execute"]>[0]): Promise<T[]> {
  const result = (await tx.execute(query)) as unknown;
  return (Array.isArray(result) ? result : (result as { rows: T[] }).rows) as T[];
}

/** The SQLSTATE and constraint of a database error, looking through driver wrappers. */
export function pgErrorInfo(error: unknown): { code?: string; constraint?: string } {
  let e: unknown = error;
  for (let depth = 0; depth < 4 && e && typeof e === "object"; depth++) {
    const { code, constraint, constraint_name } = e as { code?: unknown; constraint?: unknown; constraint_name?: unknown };
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) {
      const name = typeof constraint === "string" ? constraint : typeof constraint_name === "string" ? constraint_name : undefined;
      return { code, constraint: name };
    }
    e = (e as { cause?: unknown }).cause;
  }
  return {};
}

export const isUniqueViolation = (error: unknown, constraint?: string): boolean => {
  const info = pgErrorInfo(error);
  return info.code === "23505" && (constraint === undefined || info.constraint === constraint);
};

/**
 * `column = any($1)` with the values as one array parameter: the statement
 * text is the same for any number of values, so it stays prepared (and is
 * cheap to build), unlike `inArray` with one parameter per value.
 */
export function anyOf(column: PgColumn, values: readonly unknown[]): SQL {
  return sql`${column} = any(${sql.param([...values])}::${sql.raw(column.getSQLType())}[])`;
}
