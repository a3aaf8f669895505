/**
 * The live face in the browser does not trust what it is sent (issue 22): a
 * malformed block or section name in a draft is marked in its place on every
 * page that renders it (editor, reader, share link) while the rest shows; a
 * paste past a text block's limit is refused whole with a message before
 * anything is lost; and a peer's presence colour that is not `#rrggbb` never
 * reaches a style attribute, so it cannot make the page fetch anything.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, Page } from "@playwright/test";
import { expect, test } from "@playwright/test";
import * as encoding from "lib0/encoding";
import { Awareness, encodeAwarenessUpdate } from "y-protocols/awareness";
import * as Y from "yjs";
import { closeBrowserContexts, openLiveDocument, signInPage } from "../helpers/browser";
import { blockMap, connectLive, corruptDraft, roomName } from "../helpers/collab";
import { photograph, WIDE } from "../helpers/screenshots";
import { startTestServer, type TestServer, type TestUser } from "../helpers/server";

test.describe.configure({ mode: "serial" });

const PASSWORD = "correct horse battery";
const BRANCH = "main";

let server: TestServer;
let olive: TestUser;
let rex: TestUser;
let documentId: string;
let sectionIds: string[];
let olivePage: Page;

const text = (t: string) => ({ blockType: "text" as const, text: t });
const FIGURES = 0;
const NOTES = 1;
const SCRATCH = 2;

async function signedIn(browser: Browser, email: string): Promise<Page> {
  const context = await browser.newContext({ viewport: WIDE });
  return signInPage(context, server.url, { email, password: PASSWORD });
}

/** Corrupts a section's stored draft on the test's branch (see corruptDraft). */
const corrupt = (sectionId: string, change: (section: Y.Map<unknown>) => void) =>
  corruptDraft(server.db, { documentId, branchName: BRANCH, sectionId, authorId: olive.userId }, change);

const section = (page: Page, index: number) => page.locator(`[data-section-id="${sectionIds[index]}"]`);

/** What each page shows of the corrupted draft: the good blocks, a placeholder per bad block and for the bad name, no error page. */
async function expectMarkedNotBroken(page: Page, shows: "editors" | "rendered"): Promise<void> {
  const figures = section(page, FIGURES);
  await expect(figures).toHaveAttribute("data-synced", "true");
  const placeholders = figures.getByTestId("unreadable-block");
  await expect(placeholders).toHaveCount(2);
  await expect(placeholders.nth(0)).toHaveText(/csv\s*This block could not be shown/);
  await expect(placeholders.nth(1)).toHaveText(/Block\s*This block could not be shown/);
  const goodBlocks = shows === "editors" ? figures.getByTestId("editor-prose") : figures.locator(".markdown");
  await expect(goodBlocks).toHaveText(["Before the table.", "After the table."]);
  await expect(section(page, NOTES).getByTestId("unreadable-name")).toHaveText("Name could not be shown");
  await expect(section(page, NOTES).getByText("Notes stay readable.")).toBeVisible();
  await expect(page.getByText("Something went wrong")).toHaveCount(0);
}

test.beforeAll(async ({ browser }) => {
  server = await startTestServer({ next: true });
  olive = await server.createUser("olive@example.test", "Olive Owner", PASSWORD);
  rex = await server.createUser("rex@example.test", "Rex Reader", PASSWORD);
  const created = await server.callTool("documents", olive.userId, {
    action: "create",
    path: "handbook/figures",
    name: "Quarterly figures",
    sections: [
      { name: "Figures", content: [text("Before the table."), text("After the table.")] },
      { name: "Notes", content: [text("Notes stay readable.")] },
      { name: "Scratch", content: [text("Keep this.")] },
    ],
  });
  documentId = created.documentId;
  sectionIds = created.sectionIds;
  await server.callTool("documents", olive.userId, {
    action: "set_permissions",
    documentId,
    grants: [{ userId: rex.userId, permission: "read" }],
  });
  olivePage = await signedIn(browser, olive.email);
});

test.afterAll(async ({ browser }) => {
  await closeBrowserContexts(browser);
  await server?.close();
});

test("a malformed block or section name in the draft is marked in its place on the editor's, the reader's and the share page, the rest shown", async ({
  browser,
}) => {
  // The block of the issue (a CSV block whose headers is a string), a block of no known kind, and a name that is not text.
  await corrupt(sectionIds[FIGURES]!, (figures) => {
    const blocks = figures.get("blocks") as Y.Array<Y.Map<unknown>>;
    blocks.insert(1, [
      blockMap({ blockType: "csv", type: "storage", mediaType: "text/csv", key: "k", filename: "q.csv", headers: "a,b", rowCount: 2 }),
      blockMap({ blockType: { kind: "chart" }, data: [1, 2] }),
    ]);
  });
  await corrupt(sectionIds[NOTES]!, (notes) => notes.set("name", 7));

  await openLiveDocument(olivePage, server.url, { documentId, firstSectionId: sectionIds[FIGURES]!, branch: BRANCH });
  await expectMarkedNotBroken(olivePage, "editors");

  const rexPage = await signedIn(browser, rex.email);
  await openLiveDocument(rexPage, server.url, { documentId, firstSectionId: sectionIds[FIGURES]!, branch: BRANCH });
  await expectMarkedNotBroken(rexPage, "rendered");
  await photograph(rexPage, "live-face-unreadable-block");

  const { path } = await server.callTool("documents", olive.userId, { action: "create_share_link", documentId, permission: "read" });
  const visitor = await (await browser.newContext({ viewport: WIDE })).newPage();
  await visitor.goto(`${server.url}${path}`);
  await visitor.getByTestId("shared-document").waitFor();
  await expectMarkedNotBroken(visitor, "rendered");
});

test("pasting 1,000,001 characters into a text block is refused whole, and the person is told at once", async () => {
  const scratch = section(olivePage, SCRATCH);
  await expect(scratch).toHaveAttribute("data-synced", "true");
  const editor = scratch.getByTestId("editor-prose").locator(".cm-content");
  await editor.click();
  await olivePage.keyboard.press("End");
  await editor.evaluate((content) => {
    const data = new DataTransfer();
    data.setData("text/plain", "x".repeat(1_000_001));
    content.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
  });
  await expect(olivePage.getByTestId("toast")).toContainText(
    "This block can hold at most 1,000,000 characters; your paste of 1,000,001 characters was not added — split it across blocks or upload it as a file.",
  );
  await expect(scratch.getByTestId("editor-prose")).toHaveText("Keep this.");
  // The room holds the text as it was too: nothing of the paste was sent.
  const peer = await connectLive(server.url, roomName(documentId, BRANCH, sectionIds[SCRATCH]), { token: olive.token });
  try {
    expect(peer.section().content).toEqual([text("Keep this.")]);
  } finally {
    peer.close();
  }
  await photograph(olivePage, "editor-paste-refused");
});

test("a peer's presence colour that is not #rrggbb never reaches a caret's style, so the page fetches nothing with it", async ({
  browser,
}) => {
  const tracked: string[] = [];
  const tracker: Server = createServer((request, response) => {
    tracked.push(request.url ?? "");
    response.end();
  });
  await new Promise<void>((resolve) => tracker.listen(0, "127.0.0.1", resolve));
  const trackUrl = `http://127.0.0.1:${(tracker.address() as AddressInfo).port}/track`;
  const hostile = `red; background-image:url(${trackUrl})`;
  try {
    // Where the peer's caret goes: after "Keep", in the room's own text.
    const peer = await connectLive(server.url, roomName(documentId, BRANCH, sectionIds[SCRATCH]), { token: olive.token });
    const caret = Y.relativePositionToJSON(Y.createRelativePositionFromTypeIndex(peer.text(), 4));
    peer.close();
    // The server passes only colours on; this presence is put on the page's own socket, as a server that did not would.
    const fake = new Awareness(new Y.Doc());
    fake.setLocalState({
      user: { userId: rex.userId, name: "Mallory Peer", color: hostile, colorLight: hostile },
      cursor: { anchor: caret, head: caret },
    });
    const message = encoding.encode((encoder) => {
      encoding.writeVarUint(encoder, 1); // y-websocket's awareness message
      encoding.writeVarUint8Array(encoder, encodeAwarenessUpdate(fake, [fake.clientID]));
    });

    const page = await signedIn(browser, olive.email);
    page.on("request", (request) => {
      if (request.url().startsWith(trackUrl)) tracked.push(request.url());
    });
    let toPage: ((bytes: Buffer) => void) | undefined;
    await page.routeWebSocket(
      (url) => url.pathname.endsWith(`/~${sectionIds[SCRATCH]}`),
      (socket) => {
        socket.connectToServer();
        toPage = (bytes) => socket.send(bytes);
      },
    );
    await openLiveDocument(page, server.url, { documentId, firstSectionId: sectionIds[FIGURES]!, branch: BRANCH });
    const scratch = section(page, SCRATCH);
    await expect(scratch).toHaveAttribute("data-synced", "true");
    toPage!(Buffer.from(message));

    const malloryCaret = scratch.locator(".cm-ySelectionCaret", { hasText: "Mallory Peer" });
    await expect(malloryCaret).toBeVisible();
    const style = (await malloryCaret.getAttribute("style")) ?? "";
    expect(style).not.toContain("url(");
    expect(style).toContain("#6e7781");
    // Long enough for a background image to have been asked for.
    await page.waitForTimeout(500);
    expect(tracked).toEqual([]);
  } finally {
    await new Promise((resolve) => tracker.close(resolve));
  }
});
