/** A Quire server in its own process (`quire serve --no-web`), to restart, kill -9, or run two of on one database. */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { projectRoot } from "./server";

export interface QuireProcess {
  url: string;
  child: ChildProcess;
  /** Stops the process: SIGTERM (a graceful shutdown) or SIGKILL (kill -9). */
  stop(signal?: "SIGTERM" | "SIGKILL"): Promise<void>;
}

/** The session secret every test process is started with (to sign a browser session cookie for one). */
export const TEST_PROCESS_AUTH_SECRET = "test-secret-of-the-live-collaboration-suite";

export async function startQuireProcess(options: {
  databaseUrl: string;
  port?: number;
  redisUrl?: string;
  /** More environment (QUIRE_SMTP_URL, …). */
  env?: Record<string, string>;
  /** Node options NODE_OPTIONS may not carry (`--cpu-prof`, for the benches). */
  nodeArgs?: string[];
}): Promise<QuireProcess> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: options.databaseUrl,
    TEST_DATABASE_URL: undefined,
    QUIRE_DATA_DIR: mkdtempSync(path.join(tmpdir(), "quire-process-")),
    QUIRE_REDIS_URL: options.redisUrl,
    NEXTAUTH_SECRET: TEST_PROCESS_AUTH_SECRET,
    ...options.env,
  };
  const child = spawn(
    process.execPath,
    [...(options.nodeArgs ?? []), path.join(projectRoot, "bin", "quire.js"), "serve", "--no-web", "--port", String(options.port ?? 0)],
    {
      env,
      cwd: projectRoot,
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`quire serve did not start: ${output}`)), 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (process.env.QUIRE_TEST_PROCESS_LOG) process.stderr.write(chunk);
      const match = /serving (http:\/\/\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code) => reject(new Error(`quire serve exited with ${code}: ${output}`)));
  });
  return {
    url,
    child,
    stop: (signal = "SIGTERM") =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill(signal);
      }),
  };
}

/** The port a server URL listens on. */
export const portOf = (url: string): number => Number(new URL(url).port);
