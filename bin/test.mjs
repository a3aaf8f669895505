// `npm test`: install and build if needed, lint and format-check (Biome), type-check, then run the whole suite:
// vitest (unit, integration on PostgreSQL when TEST_DATABASE_URL/DATABASE_URL is set, otherwise PGlite; arguments
// given to `npm test` go to vitest), then the browser tests against the built app on Playwright's runner.
import { spawnSync } from "node:child_process";
import { ensureBuild, ensureDependencies, root } from "./prepare.mjs";

ensureDependencies();
ensureBuild();
const env = { ...process.env, NEXT_TELEMETRY_DISABLED: "1" };
for (const [command, args] of [
  ["npx", ["biome", "check", "."]],
  ["npx", ["tsc", "--noEmit", "-p", "."]],
  ["npx", ["vitest", "run", ...process.argv.slice(2)]],
  ["npx", ["playwright", "test"]],
]) {
  console.log(`> ${command} ${args.join(" ")}`);
  const result = spawnSync(command, args, { cwd: root, stdio: "inherit", env });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
