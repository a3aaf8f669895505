// Browser tests (tests/e2e/*.spec.ts) on Playwright's runner with Debian's Chromium: Playwright cannot download
// browsers here. Each spec file starts its own server with the built Next app (tests/helpers/server.ts).
import { defineConfig } from "@playwright/test";
import { chromiumLaunchOptions } from "./tests/helpers/browser";

export default defineConfig({
  testDir: "tests/e2e",
  testMatch: "*.spec.ts",
  // Two cores: each worker runs a whole server with Next; more only thrash.
  workers: 2,
  fullyParallel: false,
  forbidOnly: true,
  // A spec file's first hook starts a server and the built app, which takes a while on a busy machine.
  timeout: 240_000,
  expect: { timeout: 20_000 },
  reporter: [["list"]],
  outputDir: "test-results",
  use: {
    browserName: "chromium",
    launchOptions: chromiumLaunchOptions(),
    trace: "retain-on-failure",
  },
});
