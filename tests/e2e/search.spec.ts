/**
 * Search in a real Chromium: the quick-open palette (Ctrl+K from a page,
 * typing, arrows and Enter) jumps to the exact section; the search page
 * shows ranked hits with the matched words marked; a section hidden from the
 * member is never shown, on the page or in the palette; and both fit a
 * 390 px screen.
 */
import type { Page } from "@playwright/test";
import { expect, test } from "@playwright/test";
import { closeBrowserContexts, signInPage } from "../helpers/browser";
import { text } from "../helpers/blocks";
import { photograph } from "../helpers/screenshots";
import { mergeSectionOverrides, startTestServer, type TestServer, type TestUser } from "../helpers/server";

test.describe.configure({ mode: "serial" });

const PASSWORD = "correct horse battery";
let server: TestServer;
let owner: TestUser;
let member: TestUser;
let page: Page;
let documentId: string;
let rotaSectionId: string;

test.beforeAll(async ({ browser }) => {
  server = await startTestServer({ next: true });
  owner = await server.createUser("olive@example.test", "Olive Owner", PASSWORD);
  member = await server.createUser("max@example.test", "Max Member", PASSWORD);
  const created = await server.callTool("documents", owner.userId, {
    action: "create",
    path: "handbook/it/vpn",
    name: "VPN handbook",
    sections: [
      { name: "Connecting", content: [text("Install the VPN client and sign in with your badge.")] },
      ...Array.from({ length: 12 }, (_, i) => ({ name: `Filler ${i + 1}`, content: [text("Nothing to see here. ".repeat(40))] })),
      { name: "On-call rota", content: [text("When the VPN is down, page the **wombat** rota first.")] },
      { name: "Salaries", content: [text("The wombat allowance is confidential.")] },
    ],
  });
  documentId = created.documentId;
  rotaSectionId = created.sectionIds[13]!;
  await mergeSectionOverrides(server, owner.userId, { documentId, sectionId: created.sectionIds[14]! }, { defaultPermission: "none" });
  await server.callTool("documents", owner.userId, {
    action: "create",
    path: "finance/travel",
    sections: [{ name: "Trains", content: [text("Book trains early; the VPN is not needed.")] }],
  });
  page = await signInPage(await browser.newContext({ viewport: { width: 1280, height: 900 } }), server.url, {
    email: member.email,
    password: PASSWORD,
  });
});

test.afterAll(async ({ browser }) => {
  await closeBrowserContexts(browser);
  await server?.close();
});

/** Presses Ctrl+K until the dialog is open: a press before the page's script has started finds no listener. */
async function openWithShortcut(on: Page): Promise<void> {
  const dialog = on.getByRole("dialog", { name: "Quick open" });
  await expect(async () => {
    if (!(await dialog.isVisible())) await on.keyboard.press("Control+k");
    await expect(dialog).toBeVisible({ timeout: 1_000 });
  }).toPass();
}

test("Ctrl+K opens quick open from a page; typing, arrows and Enter jump to the section", async () => {
  await page.goto(`${server.url}/merge-requests`);
  const dialog = page.getByRole("dialog", { name: "Quick open" });
  await openWithShortcut(page);
  const box = dialog.getByRole("combobox");
  await expect(box).toBeFocused();
  await box.fill("wombat");
  const options = dialog.getByRole("option");
  // Only the rota: the hidden section with the same word is never offered.
  await expect(options).toHaveCount(1);
  await expect(options.first()).toContainText("On-call rota");
  await expect(options.first().locator("mark")).toHaveText(["wombat"]);
  await expect(dialog).not.toContainText("Salaries");
  await expect(dialog).not.toContainText("confidential");

  // Escape closes; Ctrl+K opens it again.
  await page.keyboard.press("Escape");
  await expect(dialog).toBeHidden();
  await openWithShortcut(page);
  await dialog.getByRole("combobox").fill("vpn");
  await expect(dialog.getByRole("option")).not.toHaveCount(0);
  await expect(dialog.getByRole("option").first()).toHaveAttribute("aria-selected", "true");
  await dialog.getByRole("combobox").fill("wombat rota");
  await expect(dialog.getByRole("option")).toHaveCount(1);
  await page.keyboard.press("ArrowDown");
  await expect(dialog.getByRole("option").first()).toHaveAttribute("aria-selected", "true");
  await page.keyboard.press("Enter");
  await page.waitForURL((url) => url.pathname === `/documents/${documentId}` && url.hash === `#section-${rotaSectionId}`);
  await expect(page.locator(`#section-${rotaSectionId}`)).toBeInViewport();
  await staysInViewAsThePageGrowsAbove(page, rotaSectionId);
});

/**
 * The page may lay out what is above a section anew after landing on it, where the browser's scroll anchoring does not
 * follow (turned off here, as in a browser without it): the section is held in view.
 */
async function staysInViewAsThePageGrowsAbove(on: Page, sectionId: string): Promise<void> {
  await on.evaluate(() => {
    document.documentElement.style.overflowAnchor = "none";
    const late = document.createElement("div");
    late.style.height = "1500px";
    document.querySelector("main")!.prepend(late);
  });
  await expect(on.locator(`#section-${sectionId}`)).toBeInViewport();
}

test("a link to a section (a notification's, say) lands on it, and it stays in view while the page lays out", async () => {
  await page.goto(`${server.url}/documents/${documentId}#section-${rotaSectionId}`);
  await expect(page.locator(`#section-${rotaSectionId}`)).toBeInViewport();
  await staysInViewAsThePageGrowsAbove(page, rotaSectionId);
});

test("the header's Search control opens quick open too", async () => {
  await page.goto(`${server.url}/`);
  // Once the page's script runs, the link opens the dialog instead of the search page.
  await page.waitForLoadState("networkidle");
  await page.getByRole("banner").getByRole("link", { name: "Search" }).click();
  await expect(page.getByRole("dialog", { name: "Quick open" })).toBeVisible();
  await page.getByRole("dialog").getByRole("combobox").fill("trains");
  await expect(page.getByRole("dialog").getByRole("option")).toHaveCount(1);
  await photograph(page, "search-quick-open");
  await page.keyboard.press("Escape");
});

test("the search page shows ranked hits with the matched words marked, never a hidden section", async () => {
  await page.goto(`${server.url}/search?q=wombat`);
  const results = page.getByTestId("search-results");
  await expect(results.getByRole("listitem")).toHaveCount(1);
  await expect(page.locator(".search-summary")).toHaveText("1 result");
  await expect(results.getByTestId("search-snippet").locator("mark")).toHaveText(["wombat"]);
  await expect(page.locator("main")).not.toContainText("Salaries");
  await expect(page.locator("main")).not.toContainText("confidential");

  await page.getByLabel("Search for").fill("vpn");
  await page.getByRole("main").getByRole("button", { name: "Search" }).click();
  await page.waitForURL((url) => url.searchParams.get("q") === "vpn");
  const titles = await results.locator(".search-hit-title").allTextContents();
  expect(titles[0]).toContain("VPN handbook");
  expect(titles.some((t) => t.includes("Trains"))).toBe(true);
  expect(titles.some((t) => t.includes("Salaries"))).toBe(false);
  // Filters: the path prefix keeps the finance document only.
  await page.getByLabel("Path starts with").fill("finance/");
  await page.getByRole("main").getByRole("button", { name: "Search" }).click();
  await page.waitForURL((url) => url.searchParams.get("path") === "finance/");
  await expect(results.locator(".search-hit-title")).toHaveCount(1);
  await expect(results).toContainText("Trains");
  await expect(results).not.toContainText("VPN handbook");
  await page.goto(`${server.url}/search?q=vpn`);
  await photograph(page, "search-page");
  // A hit opens the exact section on its branch.
  await results.getByRole("link", { name: /Connecting/ }).click();
  await page.waitForURL((url) => url.pathname === `/documents/${documentId}` && url.searchParams.get("branch") === "main");
});

test("at 390 px neither the page nor the palette scrolls sideways", async ({ browser }) => {
  const narrow = await signInPage(await browser.newContext({ viewport: { width: 390, height: 844 } }), server.url, {
    email: member.email,
    password: PASSWORD,
  });
  await narrow.goto(`${server.url}/search?q=vpn`);
  await expect(narrow.getByTestId("search-results")).toBeVisible();
  const overflow = () => narrow.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  expect(await overflow()).toBeLessThanOrEqual(0);
  await narrow.waitForLoadState("networkidle");
  await narrow.getByRole("banner").getByRole("link", { name: "Search" }).click();
  const dialog = narrow.getByRole("dialog", { name: "Quick open" });
  await dialog.getByRole("combobox").fill("wombat");
  await expect(dialog.getByRole("option")).toHaveCount(1);
  const box = await dialog.boundingBox();
  expect(box!.x).toBeGreaterThanOrEqual(0);
  expect(box!.x + box!.width).toBeLessThanOrEqual(390);
  expect(await overflow()).toBeLessThanOrEqual(0);
  await narrow.close();
});
