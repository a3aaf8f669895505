/**
 * The browser face of Quire, driven through a real Chromium against the built
 * Next app inside the real server: first-run owner setup, sign-in and
 * sign-out, the document list and the document page (markdown that must not
 * run scripts, branch switching, history, viewing a commit).
 */
import type { Browser, BrowserContext, Page } from "@playwright/test";
import { expect, test } from "@playwright/test";
import { startTestServer, type TestServer } from "../helpers/server";
import { closeBrowserContexts } from "../helpers/browser";

// The tests of this file tell one story on one server, in order.
test.describe.configure({ mode: "serial" });

const OWNER = { name: "Olive Owner", email: "olive@example.test", password: "correct horse battery" };

let server: TestServer;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let ownerId: string;
let documentId: string;

const pathOf = (page: Page) => new URL(page.url()).pathname;

test.beforeAll(async ({ browser: sharedBrowser }) => {
  server = await startTestServer({ next: true });
  browser = sharedBrowser;
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
  page.setDefaultTimeout(20_000);
});

test.afterAll(async ({ browser }) => {
  await closeBrowserContexts(browser);
  await server?.close();
});

test("a fresh instance sends visitors to /signin, which creates the owner account and signs in", async () => {
  // A second visitor who opened the form at the same time loses the race below.
  const rival = await browser.newContext();
  const rivalPage = await rival.newPage();
  await rivalPage.goto(`${server.url}/signin`);
  await rivalPage.getByRole("heading", { name: "Create the owner account" }).waitFor();

  await page.goto(`${server.url}/`);
  expect(pathOf(page)).toBe("/signin");
  await page.getByRole("heading", { name: "Create the owner account" }).waitFor();

  await page.getByLabel("Name").fill(OWNER.name);
  await page.getByLabel("Email").fill(OWNER.email);
  await page.getByLabel("Password").fill(OWNER.password);
  await page.getByRole("button", { name: "Create the owner account" }).click();

  await page.waitForURL((url) => url.pathname === "/");
  await page.getByTestId("empty-state").waitFor();
  expect(await page.getByTestId("empty-state").textContent()).toContain("documents");
  expect(await page.locator(".app-user-name").textContent()).toBe(OWNER.name);

  const session = (await page.evaluate(() => fetch("/api/auth/session").then((r) => r.json()))) as {
    user?: { id?: string; name?: string; email?: string };
  };
  expect(session.user?.email).toBe(OWNER.email);
  expect(typeof session.user?.id).toBe("string");
  ownerId = session.user!.id!;

  try {
    await rivalPage.getByLabel("Name").fill("Mallory");
    await rivalPage.getByLabel("Email").fill("mallory@example.test");
    await rivalPage.getByLabel("Password").fill("another password");
    await rivalPage.getByRole("button", { name: "Create the owner account" }).click();
    await rivalPage
      .getByRole("alert")
      .filter({ hasText: /already/i })
      .waitFor();
    await rivalPage.getByRole("link", { name: "Sign in instead" }).click();
    await rivalPage.getByRole("heading", { name: "Sign in" }).waitFor();
  } finally {
    await rival.close();
  }
});

test("documents appear by path; the document page renders markdown safely, switches branch and shows history", async () => {
  const created = await server.callTool("documents", ownerId, {
    action: "create",
    path: "handbook/onboarding",
    name: "Onboarding",
    sections: [
      {
        name: "Welcome",
        content: [
          {
            blockType: "text",
            text: 'Hello **team** <script>window.__pwned=1</script> <img src=x onerror="window.__pwned=2">',
          },
        ],
      },
    ],
  });
  documentId = created.documentId;
  // Comment markup arrives through the sections tool (new comments become <svc:comment id="…"> elements).
  const [welcome] = (await server.callTool("read", ownerId, { documentId })).sections;
  await server.callTool("sections", ownerId, {
    action: "update",
    documentId,
    branchName: "main",
    sectionId: welcome!.sectionId,
    newContent: [
      ...welcome!.content,
      {
        blockType: "text",
        text: 'Please read the <svc:comment-new body="Link the setup guide here">first steps</svc:comment-new> carefully.',
      },
    ],
  });
  await server.callTool("documents", ownerId, {
    action: "create",
    path: "handbook/travel",
    name: "Travel policy",
    description: "How to book trips.",
  });
  await server.callTool("documents", ownerId, { action: "create_branch", documentId, branchName: "draft" });
  await server.callTool("documents", ownerId, { action: "update", documentId, branchName: "draft", newName: "Onboarding v2" });
  const draftLog = await server.callTool("documents", ownerId, { action: "log", documentId, branchName: "draft" });
  expect(draftLog.commits.length).toBeGreaterThanOrEqual(2);

  await page.reload();
  const list = page.getByTestId("document-list");
  await list.waitFor();
  expect(await list.textContent()).toContain("handbook/onboarding");
  expect(await list.textContent()).toContain("Travel policy");
  await page.screenshot({ path: "/tmp/quire-home.png", fullPage: true });

  await page.getByRole("link", { name: /Onboarding/ }).click();
  await page.waitForURL((url) => url.pathname === `/documents/${documentId}`);
  await page.getByRole("heading", { level: 2, name: "Welcome" }).waitFor();
  expect(await page.locator(".doc-title").textContent()).toBe("Onboarding");
  // The owner edits on the branch head; the head's commit shows the rendered view readers get.
  const head = (await server.callTool("documents", ownerId, { action: "log", documentId, limit: 1 })).commits[0]!.commitId;
  await page.goto(`${server.url}/documents/${documentId}?commit=${head}`);
  await page.locator(".markdown strong").first().waitFor();
  expect(await page.locator(".markdown strong").first().textContent()).toBe("team");
  // Raw HTML from the document is inert text, never elements.
  expect(await page.evaluate(() => (window as { __pwned?: unknown }).__pwned)).toBeUndefined();
  expect(await page.locator(".markdown script, .markdown img[src='x']").count()).toBe(0);
  expect(await page.locator(".markdown").first().textContent()).toContain("<script>");
  expect(await page.locator(".comment-mark").first().textContent()).toBe("first steps");
  expect(await page.locator(".doc-section").first().textContent()).not.toContain("svc:comment");

  // Switch to the draft branch with the selector (a plain GET form).
  await page.locator("#branch-select").selectOption("draft");
  await page.getByRole("button", { name: "Switch" }).click();
  await page.waitForURL((url) => url.searchParams.get("branch") === "draft");
  await page.locator(".doc-title", { hasText: "Onboarding v2" }).waitFor();
  const history = (await page.getByTestId("commit-log").textContent()) ?? "";
  for (const commit of draftLog.commits) {
    expect(history).toContain(commit.message.split("\n")[0]!.trim());
    expect(history).toContain(commit.commitId.slice(0, 8));
  }
  expect(history).toContain(OWNER.name);
  await page.screenshot({ path: "/tmp/quire-document.png", fullPage: true });

  // The oldest commit shows the document as it was, under a banner leading back to the head.
  const first = draftLog.commits[draftLog.commits.length - 1]!;
  await page.getByRole("link", { name: first.commitId.slice(0, 8) }).click();
  await page.waitForURL((url) => url.searchParams.get("commit") === first.commitId);
  expect(await page.getByTestId("commit-banner").textContent()).toContain(`Viewing commit ${first.commitId.slice(0, 8)}`);
  expect(await page.locator(".doc-title").textContent()).toBe("Onboarding");
  await page.getByRole("link", { name: "back to branch head" }).click();
  await page.waitForURL((url) => url.searchParams.get("commit") === null && url.searchParams.get("branch") === "draft");
  expect(await page.locator(".doc-title").textContent()).toBe("Onboarding v2");

  // The branch selector is a plain GET form: it works with JavaScript off.
  const noScript = await browser.newContext({ javaScriptEnabled: false });
  try {
    await noScript.addCookies(await context.cookies());
    const plain = await noScript.newPage();
    await plain.goto(`${server.url}/documents/${documentId}`);
    expect(await plain.locator(".doc-title").textContent()).toBe("Onboarding");
    await plain.locator("#branch-select").selectOption("draft");
    await plain.getByRole("button", { name: "Switch" }).click();
    await plain.waitForURL((url) => url.searchParams.get("branch") === "draft");
    expect(await plain.locator(".doc-title").textContent()).toBe("Onboarding v2");
  } finally {
    await noScript.close();
  }

  // An unknown document is a 404 page.
  const missing = await page.goto(`${server.url}/documents/00000000-0000-4000-8000-000000000000`);
  expect(missing?.status()).toBe(404);
  await page.getByRole("heading", { name: "Not found" }).waitFor();
});

test("stored files show on the document page: the image loads and the file downloads through signed links", async () => {
  // A 1x1 PNG, uploaded the way an agent does: upload_url, then PUT the bytes.
  const png = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==", "base64");
  const upload = async (filename: string, mediaType: string, bytes: Buffer) => {
    const ticket = await server.callTool("upload_url", ownerId, { filename, mediaType, size: bytes.length });
    const put = await fetch(ticket.uploadUrl, { method: "PUT", headers: ticket.headers, body: new Uint8Array(bytes) });
    expect(put.status).toBeLessThan(300);
    return ticket.key;
  };
  const imageKey = await upload("dot.png", "image/png", png);
  const notesKey = await upload("notes.txt", "text/plain", Buffer.from("quarterly notes"));
  const doc = await server.callTool("documents", ownerId, {
    action: "create",
    path: "handbook/files",
    sections: [
      {
        name: "Attachments",
        content: [
          { blockType: "image", type: "storage", mediaType: "image/png", key: imageKey },
          { blockType: "file", type: "storage", mediaType: "text/plain", key: notesKey, filename: "notes.txt" },
        ],
      },
    ],
  });
  await page.goto(`${server.url}/documents/${doc.documentId}`);
  const image = page.locator(".block-image img");
  await expect.poll(() => image.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(1);
  const link = page.getByRole("link", { name: "notes.txt" });
  const href = await link.getAttribute("href");
  expect(href).toContain("/api/files/");
  const download = await page.request.get(href!);
  expect(await download.text()).toBe("quarterly notes");
});

test("sign out; a wrong password is refused; the right one returns to the page that was asked for", async () => {
  await page.goto(`${server.url}/`);
  await page.getByRole("button", { name: "Sign out" }).click();
  await page.waitForURL((url) => url.pathname === "/signin");
  await page.getByRole("heading", { name: "Sign in" }).waitFor();

  const target = `/documents/${documentId}?branch=draft`;
  await page.goto(`${server.url}${target}`);
  expect(pathOf(page)).toBe("/signin");
  expect(new URL(page.url()).searchParams.get("callbackUrl")).toBe(target);
  // With an account in place, the owner form is gone for good.
  expect(await page.getByRole("heading", { name: "Create the owner account" }).count()).toBe(0);

  await page.getByLabel("Email").fill(OWNER.email);
  await page.getByLabel("Password").fill("not the password");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("alert").filter({ hasText: "Wrong email or password." }).waitFor();
  expect(pathOf(page)).toBe("/signin");

  await page.getByLabel("Password").fill(OWNER.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL((url) => url.pathname === `/documents/${documentId}`);
  await page.locator(".doc-title", { hasText: "Onboarding v2" }).waitFor();
});

test("an open-redirect callbackUrl is ignored after sign-in", async () => {
  const fresh = await browser.newContext();
  try {
    const other = await fresh.newPage();
    await other.goto(`${server.url}/signin?callbackUrl=${encodeURIComponent("https://evil.example/")}`);
    await other.getByLabel("Email").fill(OWNER.email);
    await other.getByLabel("Password").fill(OWNER.password);
    await other.getByRole("button", { name: "Sign in" }).click();
    await other.waitForURL((url) => url.pathname === "/");
    expect(new URL(other.url()).origin).toBe(new URL(server.url).origin);
  } finally {
    await fresh.close();
  }
});
