// Brings a checkout up to date before it runs: installs dependencies when the
// lockfile changed, and rebuilds the web app when its sources changed. Plain
// Node with no dependencies, because it runs before any are installed.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

function run(command, args) {
  console.log(`> ${command} ${args.join(" ")}`);
  const result = spawnSync(command, args, { cwd: root, stdio: "inherit", env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" } });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

export function ensureDependencies() {
  const lockfile = path.join(root, "package-lock.json");
  const installed = path.join(root, "node_modules", ".package-lock.json");
  if (existsSync(installed) && statSync(installed).mtimeMs >= statSync(lockfile).mtimeMs) return;
  run("npm", ["ci", "--no-audit", "--no-fund"]);
}

const BUILD_INPUTS = ["app", "server", "db", "public", "types", "next.config.mjs", "package-lock.json", "tsconfig.json"];

function hashSources() {
  const hash = createHash("sha256");
  const visit = (relative) => {
    const full = path.join(root, relative);
    if (!existsSync(full)) return;
    if (statSync(full).isDirectory()) {
      for (const entry of readdirSync(full).sort()) visit(path.join(relative, entry));
    } else {
      hash.update(relative).update(readFileSync(full));
    }
  };
  BUILD_INPUTS.forEach(visit);
  return hash.digest("hex");
}

/** Runs `next build` unless the last build was made from exactly these sources. */
export function ensureBuild() {
  const stamp = path.join(root, ".next", "quire-sources.sha256");
  const current = hashSources();
  if (existsSync(stamp) && readFileSync(stamp, "utf8") === current) return;
  run("npx", ["next", "build"]);
  writeFileSync(stamp, current);
}
