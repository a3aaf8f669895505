// `npm run fuzz -- --seconds N [--seed S] [--ops K]`: the live fuzzer (tests/integration/live.fuzz.test.ts) seed after seed
// for N seconds against PostgreSQL (TEST_DATABASE_URL) and Redis (127.0.0.1:6379); the same code `npm test` runs briefly.
import { spawnSync } from "node:child_process";
import { parseArgs } from "node:util";
import { root } from "./prepare.mjs";

const { values } = parseArgs({
  options: { seconds: { type: "string", default: "60" }, seed: { type: "string" }, ops: { type: "string" } },
});
const env = { ...process.env, QUIRE_FUZZ_SECONDS: values.seconds };
if (values.seed) env.QUIRE_FUZZ_SEED = values.seed;
if (values.ops) env.QUIRE_FUZZ_OPS = values.ops;
const result = spawnSync("npx", ["vitest", "run", "tests/integration/live.fuzz.test.ts"], { cwd: root, stdio: "inherit", env });
process.exit(result.status ?? 1);
