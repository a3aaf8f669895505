import path from "node:path";
import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { alias: { "@": path.resolve(import.meta.dirname) } },
  test: {
    include: ["tests/**/*.test.ts"],
    pool: "forks",
    // Two cores: more parallel files only thrash.
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 240_000,
    reporters: ["default"],
  },
});
