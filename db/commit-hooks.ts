/**
 * Work that must wait until a transaction has committed: announcing a moved
 * branch head, and invalidating per-process caches. Done before COMMIT, a
 * listener could read a head that then rolls back, and a reader between the
 * invalidation and the commit could cache the old value again.
 *
 * Every database Quire opens goes through `withCommitHooks`, whose
 * `transaction` collects the hooks registered on its transaction handle and
 * runs them once the commit has succeeded (never on rollback). A hook
 * registered on the database itself (an autocommit statement) runs at once:
 * the caller registers it after its statement returned.
 */
import { is } from "drizzle-orm";
import { PgTransaction } from "drizzle-orm/pg-core";
import type { Database } from "./client";

type Handle = Database | Parameters<Parameters<Database["transaction"]>[0]>[0];

const pendingHooks = new WeakMap<object, Array<() => void>>();

/** Makes `db.transaction` run the hooks registered with `afterCommit` on its transaction once it has committed. */
export function withCommitHooks(db: Database): Database {
  const transaction = db.transaction.bind(db);
  db.transaction = (async (body, config) => {
    const hooks: Array<() => void> = [];
    const result = await transaction(async (tx) => {
      pendingHooks.set(tx, hooks);
      return body(tx);
    }, config);
    for (const hook of hooks) runHook(hook);
    return result;
  }) as Database["transaction"];
  return db;
}

/**
 * Runs `hook` once what `handle` has written is committed: after its
 * transaction's COMMIT, or now when `handle` is the database (autocommit).
 * A transaction opened any other way (a savepoint, a database not opened
 * through withCommitHooks) is refused loudly rather than guessed at.
 */
export function afterCommit(handle: Handle, hook: () => void): void {
  const hooks = pendingHooks.get(handle);
  if (hooks) hooks.push(hook);
  else if (is(handle, PgTransaction))
    throw new Error("afterCommit needs a transaction opened by db.transaction of a database from withCommitHooks.");
  else runHook(hook);
}

/** A hook cannot undo a commit, so its failure is logged and does not reach the writer. */
function runHook(hook: () => void): void {
  try {
    hook();
  } catch (error) {
    console.error("[quire] after-commit hook failed", error);
  }
}
