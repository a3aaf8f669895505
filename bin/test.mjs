// `npm test`: install and build if needed, lint and format-check (Biome), type-check, then run the whole suite
// (unit, integration on PostgreSQL when TEST_DATABASE_URL/DATABASE_URL is set,
// otherwise PGlite, and the browser tests against the built app).
import { spawnSync } from "node:child_process";
import { ensureBuild, ensureDependencies, root } from "./prepare.mjs";

ensureDependencies();
ensureBuild();
const env = { ...process.env, NEXT_TELEMETRY_DISABLED: "1" };
for (const [command, args] of [
  ["npx", ["biome", "check", "."]],
  ["npx", ["tsc", "--noEmit", "-p", "."]],
  ["npx", ["vitest", "run", ...process.argv.slice(2)]],
]) {
  console.log(`> ${command} ${args.join(" ")}`);
  const result = spawnSync(command, args, { cwd: root, stdio: "inherit", env });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
