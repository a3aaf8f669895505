/**
 * Stored files through a share link and at another host name, in a real
 * Chromium against the built app, with QUIRE_PUBLIC_URL unset: a visitor
 * without an account sees the document's image load and its CSV preview's
 * rows (download links signed for the link), whether the page was opened at
 * localhost or at 127.0.0.1 — the links start with the host the page was
 * opened at, for the visitor and for a signed-in member alike. Photographed
 * at 1280 and 390 px into docs/screenshots/.
 */
import { crc32, deflateSync } from "node:zlib";
import { expect, type Page, test } from "@playwright/test";
import { closeBrowserContexts, openLiveDocument, signInPage } from "../helpers/browser";
import { photograph, WIDE } from "../helpers/screenshots";
import { startTestServer, type TestServer, type TestUser } from "../helpers/server";

const PASSWORD = "correct horse battery";
const CSV = "month,visitors,signups\nJanuary,1200,84\nFebruary,1350,97\nMarch,1610,121\n";

/** A PNG of coloured bars on white (RGB, 8 bits), so the screenshot shows a real picture. */
function barChartPng(width: number, height: number): Buffer {
  const bars = [0.45, 0.6, 0.8];
  const colours = [
    [59, 130, 246],
    [16, 185, 129],
    [245, 158, 11],
  ] as const;
  const rows: Buffer[] = [];
  for (let y = 0; y < height; y++) {
    const row = Buffer.alloc(1 + width * 3, 255);
    row[0] = 0;
    for (let x = 0; x < width; x++) {
      const bar = Math.floor((x / width) * bars.length);
      const inBar = x % Math.floor(width / bars.length) > 8 && height - y < bars[bar]! * height;
      if (inBar) row.set(colours[bar]!, 1 + x * 3);
    }
    rows.push(row);
  }
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const typed = Buffer.concat([Buffer.from(type, "ascii"), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(typed));
    return Buffer.concat([length, typed, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from("89504e470d0a1a0a", "hex"),
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(Buffer.concat(rows))),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

let server: TestServer;
let olive: TestUser;
let documentId: string;
let sectionId: string;
let sharePath: string;
/** The same server at another host name than its own URL's (localhost). */
let otherHost: string;

async function upload(filename: string, mediaType: string, bytes: Buffer): Promise<string> {
  const ticket = await server.callTool("upload_url", olive.userId, { filename, mediaType, size: bytes.length });
  const put = await fetch(ticket.uploadUrl, { method: "PUT", headers: ticket.headers, body: new Uint8Array(bytes) });
  expect(put.status).toBe(200);
  return ticket.key;
}

/** The page's stored image has loaded (lazy images are scrolled to first); returns the host its URL names. */
async function loadedImageHost(page: Page): Promise<string> {
  const image = page.locator(".block-image img");
  await expect(image).toHaveCount(1);
  await image.scrollIntoViewIfNeeded();
  await expect.poll(() => image.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(240);
  return new URL((await image.getAttribute("src"))!).host;
}

/** Opens the share page at `origin` and waits until its section follows the branch live (its blocks then stay put). */
async function openSharePage(page: Page, origin: string): Promise<void> {
  await page.goto(`${origin}${sharePath}`);
  await page.locator(`[data-section-id="${sectionId}"][data-synced="true"]`).waitFor();
}

async function expectCsvRows(page: Page): Promise<void> {
  const preview = page.getByTestId("csv-preview");
  await expect(preview.locator("tbody tr")).toHaveCount(3);
  await expect(preview.locator("tbody tr").first()).toHaveText("January120084");
  await expect(preview.locator("tbody tr").last()).toHaveText("March1610121");
}

test.beforeAll(async () => {
  server = await startTestServer({ next: true });
  otherHost = server.url.replace("//localhost:", "//127.0.0.1:");
  expect(otherHost).not.toBe(server.url);
  olive = await server.createUser("olive@example.test", "Olive Owner", PASSWORD);
  const chartKey = await upload("visitors.png", "image/png", barChartPng(240, 120));
  const tableKey = await upload("visitors.csv", "text/csv", Buffer.from(CSV));
  const created = await server.callTool("documents", olive.userId, {
    action: "create",
    path: "reports/q1",
    name: "First quarter",
    sections: [
      {
        name: "Visitors",
        content: [
          { blockType: "text", text: "Visitors and signups grew every month." },
          { blockType: "image", type: "storage", mediaType: "image/png", key: chartKey },
          {
            blockType: "csv",
            type: "storage",
            mediaType: "text/csv",
            key: tableKey,
            filename: "visitors.csv",
            headers: ["month", "visitors", "signups"],
            rowCount: 3,
          },
        ],
      },
    ],
  });
  documentId = created.documentId;
  sectionId = created.sectionIds[0]!;
  const link = await server.callTool("documents", olive.userId, { action: "create_share_link", documentId, permission: "read" });
  sharePath = link.path;
});

test.afterAll(async ({ browser }) => {
  await closeBrowserContexts(browser);
  await server?.close();
});

test("a share-link visitor sees the document's image and CSV preview, through links signed for the link", async ({ browser }) => {
  const page = await (await browser.newContext({ viewport: WIDE })).newPage();
  await openSharePage(page, server.url);
  await expect(page.getByTestId("share-banner")).toBeVisible();
  expect(await loadedImageHost(page)).toBe(new URL(server.url).host);
  await expectCsvRows(page);
  await expect(page.getByTestId("shared-document")).not.toContainText("to download");
  const csvLink = page.getByRole("link", { name: "visitors.csv" });
  expect(new URL((await csvLink.getAttribute("href"))!).searchParams.get("as")).toBe("share");
  await photograph(page, "share-page-files");
});

test("opened at another host name, the share page's links start with that host, and load", async ({ browser }) => {
  const page = await (await browser.newContext({ viewport: WIDE })).newPage();
  await openSharePage(page, otherHost);
  expect(await loadedImageHost(page)).toBe(new URL(otherHost).host);
  await expectCsvRows(page);
  expect(new URL((await page.getByRole("link", { name: "visitors.csv" }).getAttribute("href"))!).host).toBe(new URL(otherHost).host);
});

test("a member who opens Quire at another host name gets download links for that host, and they load", async ({ browser }) => {
  const page = await signInPage(await browser.newContext({ viewport: WIDE }), otherHost, { email: olive.email, password: PASSWORD });
  await openLiveDocument(page, otherHost, { documentId, firstSectionId: sectionId });
  expect(await loadedImageHost(page)).toBe(new URL(otherHost).host);
  await expectCsvRows(page);
});
