/** The handle store functions take: the database itself or an open transaction on it. */
import { type Query, type SQL, sql } from "drizzle-orm";
import { type PgColumn, PgDialect } from "drizzle-orm/pg-core";
import type { Database } from "@/db/client";

export type Tx = Database | Parameters<Parameters<Database["transaction"]>[0]>[0];

/** Runs raw SQL and returns its rows, whichever driver is underneath. */
export async function queryRows<T>(tx: Tx, query: Parameters<Tx["execute"]>[0]): Promise<T[]> {
  return resultRows<T>(await tx.execute(query));
}

/** The rows of a result: postgres.js answers an array of rows, PGlite an object holding them. */
function resultRows<T>(result: unknown): T[] {
  return (Array.isArray(result) ? result : (result as { rows: T[] }).rows) as T[];
}

/** Parameter values a compiled statement takes, already in the driver's form (dates as ISO strings, rows as JSON text, bytes as bytes). */
export type StatementValues = Record<string, string | boolean | null | Uint8Array>;

/** Writes a statement's SQL text; it depends on no connection or transaction. */
const dialect = new PgDialect();

/**
 * A statement built from drizzle's builders over db/schema.ts once, with a
 * named placeholder where each value goes, and then run with values. It is
 * for the hottest statement (commit-to-branch.ts's head move, once per group
 * commit batch): building a statement with drizzle's builders and writing its
 * text costs more CPU than the statement's round trip, and its text never
 * changes. `inline` builds the same statement the plain way, values in place;
 * tests/unit/compiled-statement.test.ts holds the two equal.
 */
export class CompiledStatement<Values extends StatementValues> {
  #query: Query | undefined;

  /** `build` receives the transaction to take builders from and where each named value goes. */
  constructor(private readonly build: (tx: Tx, value: (name: keyof Values & string) => SQL) => SQL) {}

  /** The statement's text, with `$n` where each placeholder's value goes (written on first use). */
  query(tx: Tx): Query {
    this.#query ??= dialect.sqlToQuery(this.build(tx, (name) => sql`${sql.placeholder(name)}`));
    return this.#query;
  }

  /** The same statement built with the values in place: the plain path the compiled one must equal. */
  inline(tx: Tx, values: Values): Query {
    return dialect.sqlToQuery(this.build(tx, (name) => sql`${values[name]}`));
  }

  /** Runs the statement with these values and returns its rows. */
  async rows<T>(tx: Tx, values: Values): Promise<T[]> {
    const prepared = tx._.session.prepareQuery(this.query(tx), undefined, undefined, false);
    return resultRows<T>(await prepared.execute(values));
  }
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
