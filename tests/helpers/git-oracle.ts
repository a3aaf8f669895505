/**
 * The oracle the merge tests compare Quire with: git itself, run in a
 * throw-away bare repository as a clean user (no system or global
 * configuration, C locale), so its answers do not depend on the machine.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

export function gitAvailable(): boolean {
  try {
    execFileSync("git", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

export interface ScratchRepository {
  /** Runs git there: status 0, or 1 (what `merge-tree` answers for conflicts) with its output; any other status throws. */
  git(args: string[], input?: string): { status: number; stdout: string };
  remove(): void;
}

/** A new bare repository in a temporary folder named after `prefix`. */
export function scratchRepository(prefix: string): ScratchRepository {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  const env = { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null", HOME: dir, LC_ALL: "C" };
  const git = (args: string[], input?: string) => {
    try {
      return {
        status: 0,
        stdout: execFileSync("git", ["-C", dir, ...args], { env, input, encoding: "utf8", stdio: ["pipe", "pipe", "pipe"] }),
      };
    } catch (err) {
      const e = err as { status: number; stdout: string; stderr: string };
      if (e.status === 1) return { status: 1, stdout: e.stdout };
      throw new Error(`git ${args.join(" ")} failed (${e.status}): ${e.stderr}`);
    }
  };
  git(["init", "-q", "--bare"]);
  return { git, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
