/** Debian's Chromium, launched the way this machine allows (no downloads, no background network): by Playwright's runner (playwright.config.ts) and by vitest files that need a browser. */
import { existsSync } from "node:fs";
import { type Browser, chromium, type LaunchOptions } from "playwright-core";

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export function chromiumLaunchOptions(): LaunchOptions {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(`Chromium not found at ${CHROMIUM_PATH}: install it (apt-get install chromium) or set CHROMIUM_PATH.`);
  }
  return {
    executablePath: CHROMIUM_PATH,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
  };
}

/**
 * Closes every context open on the worker's browser, first thing in a spec file's afterAll: the browser outlives
 * the file (one per worker), and the file's pages would otherwise go on through every later file of the worker,
 * retrying their subscriptions, live rooms and scripts against the file's closed server (thousands of refused
 * requests a run), and reaching that server while it closes.
 */
export async function closeBrowserContexts(browser: Browser): Promise<void> {
  await Promise.all(browser.contexts().map((context) => context.close()));
}

export async function launchChromium(): Promise<Browser> {
  return chromium.launch(chromiumLaunchOptions());
}

/**
 * Signs in through the sign-in form, as a person would, on a new page of
 * `context`, and waits for the documents home. `origin` is the address the
 * browser uses for the server.
 */
export async function signInPage(
  context: { newPage(): Promise<import("playwright-core").Page> },
  origin: string,
  credentials: { email: string; password: string },
) {
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  await page.goto(`${origin}/signin`);
  await page.getByLabel("Email").fill(credentials.email);
  await page.getByLabel("Password").fill(credentials.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL((url) => url.pathname === "/");
  return page;
}

/** Opens a document's live page on a branch and waits until the room of its first section (`firstSectionId`) has synced. */
export async function openLiveDocument(
  page: import("playwright-core").Page,
  origin: string,
  document: { documentId: string; firstSectionId: string; branch?: string },
): Promise<void> {
  await page.goto(`${origin}/documents/${document.documentId}?branch=${encodeURIComponent(document.branch ?? "main")}`);
  await page.locator(`[data-section-id="${document.firstSectionId}"][data-synced="true"]`).waitFor();
}

/** Takes an action from a section's "⋯" menu (Add section below, Preview, Permissions…, Delete section). */
export async function sectionAction(section: import("playwright-core").Locator, item: string): Promise<void> {
  await section.getByRole("button", { name: "More section actions" }).click();
  await section.getByRole("menu", { name: "Section actions" }).getByRole("menuitem", { name: item }).click();
}
