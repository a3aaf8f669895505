// `npm start`: install what is missing, build what is stale, migrate and serve.
import { spawn } from "node:child_process";
import path from "node:path";
import { ensureBuild, ensureDependencies, root } from "./prepare.mjs";

ensureDependencies();
ensureBuild();
const child = spawn(process.execPath, [path.join(root, "bin", "quire.js"), "serve", ...process.argv.slice(2)], {
  cwd: root,
  stdio: "inherit",
  env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1", NODE_ENV: "production" },
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => child.kill(signal));
child.on("exit", (code) => process.exit(code ?? 0));
