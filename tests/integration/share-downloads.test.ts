/**
 * Downloads for a share link's visitor: the share page's read signs each file
 * link for the link (not for a user), and the download route serves it only
 * while the link lives, for its own document, and for a key held by a section
 * the link's visitor sees — never one held only by a section hidden from the
 * link, at the head or at a commit from before the hiding.
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import type { ToolName } from "@/server/actions/registry";
import { readSharedDocument } from "@/server/actions/share-links";
import { text } from "../helpers/blocks";
import { startTestServer, type TestServer, type TestUser } from "../helpers/server";

const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", "base64");
const SECRET_CSV = Buffer.from("quarter,bid\nQ3,5000000\n");

let server: TestServer;
let owner: TestUser;
let documentId: string;
let otherDocumentId: string;
let openImageKey: string;
let secretCsvKey: string;
/** The commit that created the document, before the secret section was hidden. */
let beforeHidingCommitId: string;
let shareLinkId: string;
let shareToken: string;

const asOwner = <T = Record<string, unknown>>(tool: ToolName, args: Record<string, unknown>) =>
  server.callToolAsSent(tool, owner.userId, args) as Promise<T>;

/** Uploads bytes as the owner, the way the web app does (upload_url, then the PUT); returns the key. */
async function upload(bytes: Buffer, mediaType: string, filename: string): Promise<string> {
  const granted = await asOwner<{ uploadUrl: string; key: string }>("upload_url", { filename, mediaType, size: bytes.length });
  const put = await fetch(granted.uploadUrl, { method: "PUT", headers: { "content-type": mediaType }, body: new Uint8Array(bytes) });
  expect(put.status).toBe(200);
  return granted.key;
}

/** A download URL signed for the share link, for any key and commit (as a forger who knew them would wish for). */
const shareLinkUrl = (key: string, commitId: string, forDocument = documentId) =>
  server.files.downloadUrl({
    key,
    documentId: forDocument,
    commitId,
    shareLinkId,
    principal: "share",
    expiresAt: new Date(Date.now() + 60_000),
  });

async function status(url: string): Promise<{ status: number; code?: string }> {
  const response = await fetch(url);
  if (response.ok) return { status: response.status };
  const body = (await response.json()) as { error: { code: string } };
  return { status: response.status, code: body.error.code };
}

beforeAll(async () => {
  server = await startTestServer();
  owner = await server.createUser("owner@example.test", "Olive Owner");
  openImageKey = await upload(PNG, "image/png", "dot.png");
  secretCsvKey = await upload(SECRET_CSV, "text/csv", "bids.csv");
  const created = await asOwner<{ documentId: string; sectionIds: string[]; commitId: string }>("documents", {
    action: "create",
    path: "board/deal",
    sections: [
      { name: "Open", content: [text("Our logo:"), { blockType: "image", type: "storage", mediaType: "image/png", key: openImageKey }] },
      {
        name: "Board only",
        content: [
          {
            blockType: "csv",
            type: "storage",
            mediaType: "text/csv",
            key: secretCsvKey,
            filename: "bids.csv",
            headers: ["quarter", "bid"],
            rowCount: 1,
          },
        ],
      },
    ],
  });
  documentId = created.documentId;
  beforeHidingCommitId = created.commitId;
  const secretId = created.sectionIds[1]!;
  // Overrides are set on a branch and reach main by a merge, as they must.
  await asOwner("documents", { action: "create_branch", documentId, branchName: "lockdown" });
  await asOwner("sections", { action: "update", documentId, branchName: "lockdown", sectionId: secretId, defaultPermission: "none" });
  const lockdown = await asOwner<{ mergeRequestId: string }>("merge_requests", {
    action: "create",
    documentId,
    sourceBranch: "lockdown",
    targetBranch: "main",
    title: "Board only",
  });
  await asOwner("merge_requests", { action: "execute", mergeRequestId: lockdown.mergeRequestId });
  ({ documentId: otherDocumentId } = await asOwner<{ documentId: string }>("documents", { action: "create", path: "board/other" }));

  const link = await asOwner<{ shareLinkId: string; path: string }>("documents", {
    action: "create_share_link",
    documentId,
    permission: "read",
  });
  shareLinkId = link.shareLinkId;
  shareToken = link.path.replace("/share/", "");
}, 120_000);

afterAll(async () => {
  await server?.close();
});

test("the share page's read carries download links signed for the link, and they serve the files it shows", async () => {
  const view = await readSharedDocument(server.db, shareToken, {}, new Date(), server.files);
  expect(view.sections.map((s) => s.name)).toEqual(["Open"]);
  const url = view.sections[0]!.downloads[openImageKey]!;
  const query = new URL(url).searchParams;
  expect([query.get("as"), query.get("link"), query.get("user")]).toEqual(["share", shareLinkId, null]);
  const response = await fetch(url);
  expect(response.status).toBe(200);
  expect(Buffer.from(await response.arrayBuffer()).equals(PNG)).toBe(true);
  expect(JSON.stringify(view)).not.toContain(secretCsvKey);
});

test("a download signed for the link never serves a key held only by a section hidden from the link, now or from before the hiding", async () => {
  const { headCommitId } = await readSharedDocument(server.db, shareToken, {}, new Date(), server.files);
  // The key and the commits are real: the owner's own link serves the file at both.
  for (const commitId of [headCommitId, beforeHidingCommitId]) {
    const ownersUrl = server.files.downloadUrl({
      key: secretCsvKey,
      documentId,
      commitId,
      userId: owner.userId,
      principal: "person",
      expiresAt: new Date(Date.now() + 60_000),
    });
    expect((await status(ownersUrl)).status).toBe(200);
    expect(await status(shareLinkUrl(secretCsvKey, commitId))).toEqual({ status: 404, code: "NOT_FOUND" });
  }
  expect((await status(shareLinkUrl(openImageKey, beforeHidingCommitId))).status).toBe(200);
});

test("a download signed for the link works only for its own document, unaltered, and only while the link lives", async () => {
  const view = await readSharedDocument(server.db, shareToken, {}, new Date(), server.files);
  const url = view.sections[0]!.downloads[openImageKey]!;
  expect(await status(shareLinkUrl(openImageKey, view.headCommitId, otherDocumentId))).toEqual({ status: 404, code: "NOT_FOUND" });
  // Neither the holder nor the principal can be swapped: a user's link is not a share link's, nor the reverse.
  const asUser = new URL(url);
  asUser.searchParams.delete("link");
  asUser.searchParams.set("user", owner.userId);
  asUser.searchParams.set("as", "person");
  expect(await status(asUser.toString())).toEqual({ status: 403, code: "SIGNATURE_INVALID" });

  await asOwner("documents", { action: "revoke_share_link", documentId, shareLinkId });
  expect(await status(url)).toEqual({ status: 404, code: "NOT_FOUND" });
});
