/**
 * The owner lock of an embedded database folder (`.quire/owner.lock`).
 *
 * PGlite is one PostgreSQL backend inside one process: two processes that open
 * the same folder overwrite each other's files. So exactly one process owns a
 * folder at a time, and records itself in the lock: its pid, its role and, for
 * a server, the Unix socket on which it serves the database to other local
 * processes (the `quire` CLI).
 *
 * - A server refuses to start while another server owns the folder, and waits
 *   while a CLI command holds it (CLI commands are short).
 * - A CLI command goes through the server's socket when a server owns the
 *   folder, waits while another CLI command holds it, and otherwise holds the
 *   lock itself while it opens the folder directly.
 * - A lock whose process is gone (killed, crashed) is stale and taken over.
 *   A pid can be reused after a restart (a container's server is often pid 1
 *   again), so a server's lock also counts as stale when its socket no longer
 *   answers, and a lock naming this very process that this process did not
 *   take is stale too.
 *
 * The lock appears atomically: its content is written to a temporary file
 * that is then hard-linked into place (link fails when the lock exists), so a
 * reader never sees a half-written lock.
 */
import { randomBytes } from "node:crypto";
import { linkSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import path from "node:path";

export type OwnerRole = "server" | "cli";

export interface OwnerRecord {
  pid: number;
  role: OwnerRole;
  /** Unix socket a server serves the database on; null for a CLI command. */
  socket: string | null;
  startedAt: string;
}

/** Another server owns the folder: the caller must not open it. */
export class DataFolderBusyError extends Error {
  constructor(
    message: string,
    readonly owner: OwnerRecord,
  ) {
    super(message);
    this.name = "DataFolderBusyError";
  }
}

export type Claim = { kind: "held"; record: OwnerRecord; release(): void } | { kind: "server"; owner: OwnerRecord };

export const ownerLockPath = (folder: string): string => path.join(folder, "owner.lock");

/** A server's lock younger than this counts as live even before its socket answers (it is still opening the database). */
const STARTUP_GRACE_MS = 60_000;
const POLL_MS = 100;

/** Locks this process holds, by lock path (a lock naming this pid that is not here was left by an earlier process). */
const heldHere = new Map<string, OwnerRecord>();
let exitHookInstalled = false;

/** The folder as the user knows it: relative to the working directory when inside it. */
export function displayFolder(folder: string): string {
  const relative = path.relative(process.cwd(), folder);
  return relative && !relative.startsWith("..") && !path.isAbsolute(relative) ? `${relative}/` : `${folder}/`;
}

export function readOwner(folder: string): OwnerRecord | null {
  let text: string;
  try {
    text = readFileSync(ownerLockPath(folder), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
  try {
    const parsed = JSON.parse(text) as Partial<OwnerRecord>;
    if (typeof parsed.pid === "number" && (parsed.role === "server" || parsed.role === "cli") && typeof parsed.startedAt === "string") {
      return {
        pid: parsed.pid,
        role: parsed.role,
        socket: typeof parsed.socket === "string" ? parsed.socket : null,
        startedAt: parsed.startedAt,
      };
    }
  } catch {
    // unreadable: treated as stale below
  }
  return { pid: 0, role: "cli", socket: null, startedAt: new Date(0).toISOString() };
}

function processAlive(pid: number): boolean {
  if (!(pid > 0)) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function socketAnswers(socketPath: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(socketPath);
    const done = (answer: boolean) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

/** Whether the process a lock names still owns the folder. */
export async function ownerIsLive(folder: string, record: OwnerRecord): Promise<boolean> {
  if (record.pid === process.pid) {
    const mine = heldHere.get(ownerLockPath(folder));
    return mine !== undefined && mine.startedAt === record.startedAt;
  }
  if (!processAlive(record.pid)) return false;
  if (record.role === "server" && record.socket) {
    if (Date.now() - Date.parse(record.startedAt) < STARTUP_GRACE_MS) return true;
    return socketAnswers(record.socket);
  }
  return true;
}

function tryCreate(folder: string, record: OwnerRecord): boolean {
  const lock = ownerLockPath(folder);
  const temporary = `${lock}.${process.pid}.${randomBytes(4).toString("hex")}`;
  writeFileSync(temporary, JSON.stringify(record));
  try {
    linkSync(temporary, lock);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  } finally {
    rmSync(temporary, { force: true });
  }
}

const sameRecord = (a: OwnerRecord | null, b: OwnerRecord) =>
  a !== null && a.pid === b.pid && a.startedAt === b.startedAt && a.role === b.role;

/** Removes a stale lock, unless another process replaced it meanwhile (then it is put back). */
function removeStale(folder: string, stale: OwnerRecord): void {
  const lock = ownerLockPath(folder);
  const aside = `${lock}.stale.${process.pid}.${randomBytes(4).toString("hex")}`;
  try {
    renameSync(lock, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  let moved: OwnerRecord | null;
  try {
    moved = JSON.parse(readFileSync(aside, "utf8")) as OwnerRecord;
  } catch {
    moved = null;
  }
  if (moved !== null && !sameRecord(moved, stale)) {
    // A fresh lock replaced the stale one between our read and the rename: restore it.
    try {
      linkSync(aside, lock);
    } catch {
      // another process took the folder meanwhile; either way the fresh lock's owner keeps it or loses nothing
    }
  }
  rmSync(aside, { force: true });
}

function releaseSync(folder: string, record: OwnerRecord): void {
  const lock = ownerLockPath(folder);
  if (heldHere.get(lock) !== record) return;
  heldHere.delete(lock);
  if (sameRecord(readOwner(folder), record)) rmSync(lock, { force: true });
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // A process that exits without closing its database (process.exit, an uncaught error) leaves no lock behind.
  process.on("exit", () => {
    for (const [lock, record] of heldHere) releaseSync(path.dirname(lock), record);
  });
}

export interface ClaimOptions {
  /** Unix socket the server will serve on (server role only). */
  socket?: string;
  /** How long to wait for a CLI command that holds the folder. */
  waitMs?: number;
  /** Told once when the claim has to wait for another process. */
  onWait?: (owner: OwnerRecord) => void;
}

/**
 * Takes the folder for this process, or (for the CLI role) reports the server
 * that owns it. A server role meeting a live server fails with DataFolderBusyError.
 */
export async function claimDataFolder(folder: string, role: OwnerRole, options: ClaimOptions = {}): Promise<Claim> {
  const deadline = Date.now() + (options.waitMs ?? 60_000);
  let toldWaiting = false;
  for (;;) {
    const record: OwnerRecord = {
      pid: process.pid,
      role,
      socket: role === "server" ? (options.socket ?? null) : null,
      startedAt: new Date().toISOString(),
    };
    if (tryCreate(folder, record)) {
      heldHere.set(ownerLockPath(folder), record);
      installExitHook();
      return { kind: "held", record, release: () => releaseSync(folder, record) };
    }
    const owner = readOwner(folder);
    if (owner === null) continue;
    if (!(await ownerIsLive(folder, owner))) {
      removeStale(folder, owner);
      continue;
    }
    if (owner.role === "server") {
      if (role === "cli") return { kind: "server", owner };
      throw new DataFolderBusyError(
        `Another Quire server (pid ${owner.pid}) is using ${displayFolder(folder)} since ${owner.startedAt}. ` +
          `Stop it first, or give this server its own QUIRE_DATA_DIR (or a DATABASE_URL). ` +
          `While it runs, \`quire\` commands work through its socket${owner.socket ? ` ${owner.socket}` : ""}.`,
        owner,
      );
    }
    if (Date.now() > deadline) {
      throw new DataFolderBusyError(
        `quire (pid ${owner.pid}) has been holding ${displayFolder(folder)} since ${owner.startedAt}; try again when it has finished, ` +
          `or stop it if it hangs.`,
        owner,
      );
    }
    if (!toldWaiting) {
      toldWaiting = true;
      options.onWait?.(owner);
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
