import path from "node:path";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { alias: { "@": path.resolve(import.meta.dirname) } },
  test: {
    // Browser tests (tests/e2e/*.spec.ts) run on Playwright's runner (playwright.config.ts).
    include: ["tests/**/*.test.ts"],
    pool: "forks",
    // Two cores: more parallel files only thrash.
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 240_000,
    reporters: ["default"],
  },
});
