/**
 * The documents home in a real Chromium: folders nested by path, search by
 * name or path, the recently edited order, and New document (members only;
 * a taken path is refused with the tool's message and nothing is created).
 */
import type { Page } from "@playwright/test";
import { expect, test } from "@playwright/test";
import { closeBrowserContexts, signInPage } from "../helpers/browser";
import { photograph } from "../helpers/screenshots";
import { startTestServer, type TestServer, type TestUser } from "../helpers/server";

test.describe.configure({ mode: "serial" });

const PASSWORD = "correct horse battery";
let server: TestServer;
let owner: TestUser;
let guest: TestUser;
let page: Page;

test.beforeAll(async ({ browser }) => {
  server = await startTestServer({ next: true });
  owner = await server.createUser("olive@example.test", "Olive Owner", PASSWORD);
  guest = await server.createUser("gus@example.test", "Gus Guest", PASSWORD);
  await server.trpcCaller(owner).workspace({ action: "change_role", userId: guest.userId, role: "guest" });
  for (const [path, name] of [
    ["handbook/engineering/deploys", "Deploying"],
    ["handbook/engineering/oncall", "On-call"],
    ["handbook/travel", "Travel policy"],
    ["readme", "Read me"],
  ] as const) {
    await server.callTool("documents", owner.userId, { action: "create", path, name });
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  page = await signInPage(await browser.newContext({ viewport: { width: 1280, height: 900 } }), server.url, {
    email: owner.email,
    password: PASSWORD,
  });
});

test.afterAll(async ({ browser }) => {
  await closeBrowserContexts(browser);
  await server?.close();
});

const rowNames = (scope: Page | ReturnType<Page["locator"]>) => scope.locator(".doc-row-name").allTextContents();

test("documents are nested in folders by path, each folder with its count", async () => {
  const list = page.getByTestId("document-list");
  await list.waitFor();
  const handbook = list.locator("details.doc-folder", { has: page.locator("summary", { hasText: /^handbook\// }) }).first();
  await expect(handbook.locator("> summary")).toContainText("3");
  const engineering = handbook.locator("details.doc-folder").first();
  await expect(engineering.locator("> summary")).toContainText("engineering/");
  expect(await rowNames(engineering)).toEqual(["Deploying", "On-call"]);
  // Folders fold away with their summary.
  await engineering.locator("> summary").click();
  await expect(engineering.locator(".doc-row").first()).toBeHidden();
  expect(await rowNames(list.locator("> section"))).toEqual(["Read me"]);
  await engineering.locator("> summary").click();
  await photograph(page, "documents-home");
});

test("search finds documents by name or path, ignoring case", async () => {
  await page.getByLabel("Search documents by name or path").fill("ENGINEERING");
  await page.getByRole("button", { name: "Search" }).click();
  await page.waitForURL((url) => url.searchParams.get("q") === "ENGINEERING");
  expect(await rowNames(page)).toEqual(["Deploying", "On-call"]);
  await page.getByLabel("Search documents by name or path").fill("nothing like this");
  await page.getByRole("button", { name: "Search" }).click();
  await page.getByRole("heading", { name: "No document matches “nothing like this”" }).waitFor();
  await page.getByRole("link", { name: "Show all documents" }).click();
  await page.waitForURL((url) => !url.searchParams.has("q"));
});

test("recently edited puts the last change first", async () => {
  const [deploys] = (await server.callTool("documents", owner.userId, { action: "list", search: "deploys" })).documents;
  await server.callTool("documents", owner.userId, {
    action: "update",
    documentId: deploys!.documentId,
    branchName: "main",
    newDescription: "How we ship.",
  });
  await page.getByRole("link", { name: "Recently edited" }).click();
  await page.waitForURL((url) => url.searchParams.get("order") === "updated");
  expect(await rowNames(page)).toEqual(["Deploying", "Read me", "Travel policy", "On-call"]);
});

test("New document creates one and opens it; a taken path is refused and nothing is created", async () => {
  await page.goto(`${server.url}/`);
  await page.getByRole("button", { name: "New document" }).click();
  const form = page.getByRole("form", { name: "New document" });
  await form.getByLabel("Path").fill("readme");
  await form.getByRole("button", { name: "Create" }).click();
  await expect(form.getByRole("alert")).toContainText(/path/i);
  expect((await server.callTool("documents", owner.userId, { action: "list" })).documents).toHaveLength(4);

  await form.getByLabel("Path").fill("/handbook/security");
  await form.getByLabel("Name (optional)").fill("Security");
  await form.getByRole("button", { name: "Create" }).click();
  await page.waitForURL((url) => url.pathname.startsWith("/documents/"));
  await expect(page.locator(".doc-title")).toHaveText("Security");
  const listed = await server.callTool("documents", owner.userId, { action: "list", search: "security" });
  expect(listed.documents.map((d) => d.path)).toEqual(["handbook/security"]);
});

test("a guest is not offered New document", async ({ browser }) => {
  const guestPage = await signInPage(await browser.newContext(), server.url, { email: guest.email, password: PASSWORD });
  await guestPage.getByRole("heading", { name: "Nothing is shared with you yet" }).waitFor();
  await expect(guestPage.getByRole("button", { name: "New document" })).toHaveCount(0);
});
