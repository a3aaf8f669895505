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
  // The built app's server code (.next/) is plain JavaScript loaded into the worker with the server: without this
  // Playwright's require hook ran Babel over its chunks, blocking the worker's event loop for seconds on the
  // first render of a page (a document page's first load took 5-7 s alone, 17 s beside the other worker).
  build: { external: ["**/.next/**"] },
  reporter: [["list"]],
  outputDir: "test-results",
  use: {
    browserName: "chromium",
    launchOptions: chromiumLaunchOptions(),
    trace: "retain-on-failure",
  },
});
