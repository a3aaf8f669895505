/**
 * Cross-site WebSocket hijacking, in Chromium: a member signed in to Quire at
 * http://localhost:<port> visits a page served from another origin of the same
 * site (http://localhost:<another port>). Cookies are not scoped by port, so
 * the browser sends the member's session cookie with that page's WebSocket
 * upgrade to a live room; without the upgrade's Origin check the page synced
 * the draft and could write to it. The same script from Quire's own page
 * shows the room opens with that cookie.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { BrowserContext, Page } from "@playwright/test";
import { expect, test } from "@playwright/test";
import { closeBrowserContexts, signInPage } from "../helpers/browser";
import { startTestServer, type TestServer } from "../helpers/server";

const PASSWORD = "correct horse battery";
const DRAFT_TEXT = "Quarterly numbers, not for other sites";

let server: TestServer;
/** A plain page on another port of localhost: the other origin. */
let elsewhere: Server;
let elsewhereUrl: string;
let context: BrowserContext;
let page: Page;
let roomUrl: string;

interface Probe {
  opened: boolean;
  /** Whether the draft's text arrived in the room's frames. */
  readDraft: boolean;
}

/**
 * Opens the room from whatever page `page` shows, asks for the whole draft
 * (y-websocket sync step 1 with an empty state vector) and reports what came
 * back within five seconds.
 */
function probeRoom(page: Page): Promise<Probe> {
  return page.evaluate(
    ({ url, text }) =>
      new Promise<Probe>((resolve) => {
        const socket = new WebSocket(url);
        socket.binaryType = "arraybuffer";
        let opened = false;
        let received = "";
        const done = () => {
          socket.close();
          resolve({ opened, readDraft: received.includes(text) });
        };
        socket.onopen = () => {
          opened = true;
          socket.send(new Uint8Array([0, 0, 1, 0]));
        };
        socket.onmessage = (event: MessageEvent<ArrayBuffer>) => {
          received += new TextDecoder().decode(event.data);
          if (received.includes(text)) done();
        };
        socket.onclose = done;
        setTimeout(done, 5_000);
      }),
    { url: roomUrl, text: DRAFT_TEXT },
  );
}

test.beforeAll(async ({ browser }) => {
  server = await startTestServer({ next: true });
  const member = await server.createUser("mira@example.test", "Mira Member", PASSWORD);
  const created = (await server.callTool("documents", member.userId, {
    action: "create",
    path: "finance/quarterly",
    sections: [{ name: "Numbers", content: [{ blockType: "text", text: DRAFT_TEXT }] }],
  })) as { documentId: string; sectionIds: string[] };
  roomUrl = `${server.url.replace(/^http/, "ws")}/collab/${created.documentId}/main/~${created.sectionIds[0]}`;

  elsewhere = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end("<!doctype html><title>Elsewhere</title><p>Another site's page on this machine.</p>");
  });
  await new Promise<void>((resolve) => elsewhere.listen(0, "127.0.0.1", resolve));
  elsewhereUrl = `http://localhost:${(elsewhere.address() as AddressInfo).port}/`;

  context = await browser.newContext();
  page = await signInPage(context, server.url, { email: "mira@example.test", password: PASSWORD });
});

test.afterAll(async ({ browser }) => {
  await closeBrowserContexts(browser);
  await new Promise((resolve) => elsewhere?.close(resolve));
  await server?.close();
});

test("from Quire's own page the member's cookie opens the room and reads the draft", async () => {
  expect(await probeRoom(page)).toEqual({ opened: true, readDraft: true });
});

test("a page on another port of localhost, with the same cookie sent, cannot open the room", async () => {
  await page.goto(elsewhereUrl);
  await expect(page.getByText("Another site's page")).toBeVisible();
  // The browser does send the session cookie to Quire's host from here: cookies ignore ports.
  const cookies = await context.cookies(server.url);
  expect(cookies.some((cookie) => cookie.name.includes("session-token"))).toBe(true);
  expect(await probeRoom(page)).toEqual({ opened: false, readDraft: false });
});
