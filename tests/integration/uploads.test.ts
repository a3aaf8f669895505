/**
 * Uploads end to end: `upload_url` through MCP (and tRPC), the signed PUT,
 * storage blocks naming the key, and signed downloads; every refusal with its
 * status and code. Runs on PostgreSQL when TEST_DATABASE_URL is set.
 */
import { createHash, randomBytes } from "node:crypto";
import { request as httpRequest } from "node:http";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { uploads } from "@/db/schema";
import { tools } from "@/server/actions/registry";
import { runTool } from "@/server/actions/tool";
import { actorForUser } from "@/server/access/actor";
import { callMcp, callMcpError, startTestServer, type TestServer, type TestUser } from "../helpers/server";
import { asSent } from "../helpers/as-sent";

const MAX_UPLOAD = 64 * 1024;

let server: TestServer;
let owner: TestUser;
let member: TestUser;
let mcp: Client;
let documentId: string;

interface Grant {
  uploadUrl: string;
  key: string;
  method: string;
  headers: Record<string, string>;
  expiresAt: string;
  maxBytes: number;
}

interface SectionRead {
  sectionId: string;
  content: Array<Record<string, unknown>>;
  /** Storage key -> signed download URL (proposed `read` shape). */
  downloads?: Record<string, string>;
}

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const png = (size = 2_000) => Buffer.concat([Buffer.from("89504e470d0a1a0a", "hex"), randomBytes(size - 8)]);

async function grant(args: Record<string, unknown>): Promise<Grant> {
  return callMcp<Grant>(mcp, "upload_url", args);
}

async function put(
  url: string,
  body: Buffer | ReadableStream<Uint8Array>,
  contentType: string | null = "image/png",
  init: RequestInit = {},
) {
  const response = await fetch(url, {
    method: "PUT",
    headers: contentType ? { "content-type": contentType } : {},
    body: Buffer.isBuffer(body) ? new Uint8Array(body) : body,
    ...init,
  });
  const json = (await response.json()) as Record<string, unknown> & { error?: { code: string; message: string } };
  return { status: response.status, json };
}

/** A raw request, so the path reaches the server exactly as written (fetch would normalise "..") */
function rawRequest(method: string, path: string, headers: Record<string, string> = {}, body?: Buffer) {
  const { hostname, port } = new URL(server.url);
  return new Promise<{ status: number; json: { error?: { code: string } } }>((resolve, reject) => {
    const req = httpRequest({ host: hostname === "localhost" ? "127.0.0.1" : hostname, port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString("utf8") || "{}") }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

async function uploadRow(key: string) {
  const [row] = await server.db.select().from(uploads).where(eq(uploads.key, key));
  return row;
}

/** Uploads bytes completely; returns the key. */
async function upload(bytes: Buffer, mediaType = "image/png", filename = "picture.png"): Promise<string> {
  const g = await grant({ filename, mediaType, size: bytes.length });
  const done = await put(g.uploadUrl, bytes, mediaType);
  expect(done.status).toBe(200);
  return g.key;
}

/** Puts an uploaded file in a new section of the test document as `by`; returns the commit that holds it. */
async function publish(key: string, mediaType = "image/png", by: Client = mcp): Promise<string> {
  const block = mediaType.startsWith("image/")
    ? { blockType: "image", type: "storage", mediaType, key }
    : { blockType: "file", type: "storage", mediaType, key, filename: "file" };
  const created = await callMcp<{ commitId: string }>(by, "sections", {
    action: "create",
    documentId,
    branchName: "main",
    name: `File ${key.slice(-12)}`,
    content: [block],
  });
  return created.commitId;
}

/** A download link as `read` signs it, for `userId` (in person unless said) and the key as held at `commitId`. */
const linkFor = (
  key: string,
  commitId: string,
  userId: string,
  expiresAt = new Date(Date.now() + 60_000),
  principal: "person" | "agent" = "person",
) => server.files.downloadUrl({ key, documentId, commitId, userId, principal, expiresAt });

beforeAll(async () => {
  server = await startTestServer({ maxUploadBytes: MAX_UPLOAD });
  owner = await server.createUser("owner@example.test", "Olive Owner");
  member = await server.createUser("member@example.test", "Mo Member");
  mcp = await server.mcpClient(owner.token);
  ({ documentId } = await callMcp<{ documentId: string }>(mcp, "documents", { action: "create", path: "files" }));
});

afterAll(async () => {
  await mcp?.close();
  await server?.close();
});

describe("upload, reference, read, download", () => {
  test("the whole round trip returns the same bytes", async () => {
    const bytes = png();
    const g = await grant({ filename: "chart.png", mediaType: "image/png", size: bytes.length });
    expect(g.method).toBe("PUT");
    expect(g.headers).toEqual({ "content-type": "image/png" });
    expect(g.maxBytes).toBe(bytes.length);
    expect(g.key).toMatch(new RegExp(`^${owner.actor.workspaceId}/[0-9a-f-]{36}\\.png$`));
    expect(g.uploadUrl.startsWith(`${server.url}/api/uploads/${g.key}?expires=`)).toBe(true);
    const ttl = Date.parse(g.expiresAt) - Date.now();
    expect(ttl).toBeGreaterThan(59 * 60_000);
    expect(ttl).toBeLessThanOrEqual(60 * 60_000);
    expect(await uploadRow(g.key)).toMatchObject({ filename: "chart.png", mediaType: "image/png", completedAt: null });

    // Not usable before its bytes arrived.
    const early = await callMcpError(mcp, "sections", {
      action: "create",
      documentId,
      branchName: "main",
      name: "Early",
      content: [{ blockType: "image", type: "storage", mediaType: "image/png", key: g.key }],
    });
    expect(early.code).toBe("NOT_FOUND");

    const done = await put(g.uploadUrl, bytes);
    expect(done).toEqual({
      status: 200,
      json: { key: g.key, filename: "chart.png", mediaType: "image/png", byteSize: bytes.length, sha256: sha256(bytes) },
    });
    const row = await uploadRow(g.key);
    expect(row?.completedAt).toBeInstanceOf(Date);
    expect(row).toMatchObject({ byteSize: bytes.length, sha256: sha256(bytes) });

    const block = { blockType: "image", type: "storage", mediaType: "image/png", key: g.key };
    const created = await callMcp<{ sectionId: string }>(mcp, "sections", {
      action: "create",
      documentId,
      branchName: "main",
      name: "Chart",
      content: [block],
    });
    const doc = await callMcp<{ sections: SectionRead[] }>(mcp, "read", { documentId, sectionIds: [created.sectionId] });
    const section = doc.sections[0]!;
    expect(section.content).toEqual([block]);
    const url = section.downloads?.[g.key];
    expect(url, "read returns a download URL per storage key (section.downloads)").toMatch(
      new RegExp(
        `^${server.url}/api/files/${g.key}\\?document=${documentId}&commit=[0-9a-f-]{36}&user=${owner.userId}&as=agent&expires=\\d+&signature=`,
      ),
    );

    const response = await fetch(url!);
    expect(response.status).toBe(200);
    expect(sha256(new Uint8Array(await response.arrayBuffer()))).toBe(sha256(bytes));
    expect(response.headers.get("content-type")).toBe("image/png");
    expect(response.headers.get("content-length")).toBe(String(bytes.length));
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    expect(response.headers.get("content-disposition")).toBe(`inline; filename="chart.png"; filename*=UTF-8''chart.png`);
    expect(response.headers.get("content-security-policy")).toMatch(/default-src 'none'.*sandbox/);
  });

  test("a non-image file downloads as an attachment, and HEAD sends headers only", async () => {
    const bytes = Buffer.from("a,b\n1,2\n<script>alert(1)</script>\n");
    const key = await upload(bytes, "text/csv", "données.csv");
    const url = linkFor(key, await publish(key, "text/csv"), owner.userId);
    const response = await fetch(url);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/csv");
    expect(response.headers.get("content-disposition")).toBe(`attachment; filename="donn_es.csv"; filename*=UTF-8''donn%C3%A9es.csv`);
    expect(Buffer.from(await response.arrayBuffer())).toEqual(bytes);
    const head = await fetch(url, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe(String(bytes.length));
  });

  test("uploadUrl works through tRPC too, with the same validation", async () => {
    const trpc = server.trpcClient(owner.token);
    const g = await trpc.uploadUrl.mutate({ filename: "notes.md", mediaType: "text/markdown; charset=utf-8" });
    expect(g.key).toMatch(/\.md$/);
    expect(g.headers["content-type"]).toBe("text/markdown");
    expect(g.maxBytes).toBe(MAX_UPLOAD);
    await expect(trpc.uploadUrl.mutate({ filename: "x.svg", mediaType: "image/svg+xml" })).rejects.toMatchObject({
      data: { error: { code: "VALIDATION_FAILED" } },
    });
  });
});

describe("upload_url refuses", () => {
  test.each([
    ["SVG (a script vector)", { filename: "x.svg", mediaType: "image/svg+xml" }, "mediaType"],
    ["HTML", { filename: "x.html", mediaType: "text/html" }, "mediaType"],
    ["an executable", { filename: "x.exe", mediaType: "application/x-msdownload" }, "mediaType"],
    ["a size over the limit", { filename: "x.png", mediaType: "image/png", size: MAX_UPLOAD + 1 }, "size"],
    ["a zero size", { filename: "x.png", mediaType: "image/png", size: 0 }, "size"],
    ["a filename with a path", { filename: "../x.png", mediaType: "image/png" }, "filename"],
    ["a filename with a backslash", { filename: "a\\x.png", mediaType: "image/png" }, "filename"],
    ["a filename with a control character", { filename: "x\n.png", mediaType: "image/png" }, "filename"],
    ["an empty filename", { filename: "", mediaType: "image/png" }, "filename"],
    ["a filename over 255 characters", { filename: `${"a".repeat(252)}.png`, mediaType: "image/png" }, "filename"],
  ])("%s with VALIDATION_FAILED", async (_label, args, path) => {
    const error = await callMcpError(mcp, "upload_url", args);
    expect(error.code).toBe("VALIDATION_FAILED");
    expect((error.details as { issues: Array<{ path: string }> }).issues.map((i) => i.path)).toContain(path);
  });
});

describe("the PUT refuses", () => {
  test("a path-traversal key in the URL (400), raw or percent-encoded", async () => {
    const g = await grant({ filename: "a.png", mediaType: "image/png" });
    const query = new URL(g.uploadUrl).search;
    for (const path of [
      `/api/uploads/${owner.actor.workspaceId}/../../../etc/passwd${query}`,
      `/api/uploads/%2e%2e/%2e%2e/etc/passwd${query}`,
      `/api/uploads//etc/passwd${query}`,
    ]) {
      const response = await rawRequest("PUT", path, { "content-type": "image/png" }, Buffer.from("x"));
      expect(response.status, path).toBe(400);
      expect(response.json.error?.code).toBe("VALIDATION_FAILED");
    }
    const download = await rawRequest(
      "GET",
      `/api/files/../../etc/passwd?document=${documentId}&user=${owner.userId}&expires=1&signature=x`,
    );
    expect(download.status).toBe(400);
  });

  test("a path-traversal key in a storage block (NOT_FOUND, nothing written)", async () => {
    const before = await callMcp<{ headCommitId: string }>(mcp, "read", { documentId });
    const error = await callMcpError(mcp, "sections", {
      action: "create",
      documentId,
      branchName: "main",
      name: "Sneaky",
      content: [{ blockType: "image", type: "storage", mediaType: "image/png", key: `${owner.actor.workspaceId}/../../etc/passwd` }],
    });
    expect(error.code).toBe("NOT_FOUND");
    expect((await callMcp<{ headCommitId: string }>(mcp, "read", { documentId })).headCommitId).toBe(before.headCommitId);
  });

  test("a wrong, tampered or missing signature (403 SIGNATURE_INVALID)", async () => {
    const g = await grant({ filename: "a.png", mediaType: "image/png" });
    const url = new URL(g.uploadUrl);
    const signature = url.searchParams.get("signature")!;
    const expires = Number(url.searchParams.get("expires"));
    const variants = [
      (u: URL) => u.searchParams.set("signature", `${signature.slice(0, -2)}AA`),
      (u: URL) => u.searchParams.set("signature", "x"),
      (u: URL) => u.searchParams.delete("signature"),
      (u: URL) => u.searchParams.set("expires", String(expires + 3600)),
      (u: URL) => u.searchParams.delete("expires"),
      (u: URL) => {
        u.pathname = u.pathname.replace(/\.png$/, ".jpg");
      },
    ];
    for (const change of variants) {
      const tampered = new URL(g.uploadUrl);
      change(tampered);
      const response = await put(tampered.toString(), png(100));
      expect(response.status, tampered.toString()).toBe(403);
      expect(response.json.error?.code).toBe("SIGNATURE_INVALID");
    }
    expect((await uploadRow(g.key))?.completedAt).toBeNull();
    // A download link is not an upload link, and the reverse.
    const download = linkFor(g.key, crypto.randomUUID(), owner.userId);
    const swapped = `${server.url}/api/uploads/${g.key}?expires=${new URL(download).searchParams.get("expires")}&signature=${new URL(download).searchParams.get("signature")}`;
    expect((await put(swapped, png(100))).json.error?.code).toBe("SIGNATURE_INVALID");
  });

  test("an expired URL (403 LINK_EXPIRED), with a clock in the past", async () => {
    const actor = (await actorForUser(server.db, owner.userId, "agent"))!;
    const twoHoursAgo = new Date(Date.now() - 2 * 3_600_000);
    const g = (await runTool(
      tools.upload_url,
      { db: server.db, actor, clock: () => twoHoursAgo, files: server.files, live: server.live },
      {
        filename: "old.png",
        mediaType: "image/png",
      },
    )) as Grant;
    expect(Date.parse(g.expiresAt)).toBeLessThan(Date.now());
    const response = await put(g.uploadUrl, png(100));
    expect(response.status).toBe(403);
    expect(response.json.error?.code).toBe("LINK_EXPIRED");
    expect((await uploadRow(g.key))?.completedAt).toBeNull();
  });

  test("a second PUT to the same URL (409), and of two racing PUTs exactly one wins", async () => {
    const bytes = png();
    const g = await grant({ filename: "a.png", mediaType: "image/png" });
    expect((await put(g.uploadUrl, bytes)).status).toBe(200);
    const again = await put(g.uploadUrl, png());
    expect(again.status).toBe(409);
    expect(again.json.error?.code).toBe("UPLOAD_ALREADY_USED");
    expect((await uploadRow(g.key))?.sha256).toBe(sha256(bytes));

    const race = await grant({ filename: "b.png", mediaType: "image/png" });
    const bodies = [png(30_000), png(30_000), png(30_000), png(30_000)];
    const results = await Promise.all(bodies.map((b) => put(race.uploadUrl, b)));
    expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409, 409]);
    const winner = bodies[results.findIndex((r) => r.status === 200)]!;
    expect((await uploadRow(race.key))?.sha256).toBe(sha256(winner));
    const stored = await server.objectStore.get(race.key);
    const chunks: Buffer[] = [];
    for await (const chunk of stored!.body) chunks.push(chunk as Buffer);
    expect(sha256(Buffer.concat(chunks))).toBe(sha256(winner));
  });

  test("a Content-Type other than the requested one (415), and none at all", async () => {
    const g = await grant({ filename: "a.png", mediaType: "image/png" });
    for (const type of ["image/jpeg", "text/html", null]) {
      const response = await put(g.uploadUrl, png(100), type);
      expect(response.status).toBe(415);
      expect(response.json.error?.code).toBe("UNSUPPORTED_MEDIA_TYPE");
    }
    // Parameters and case do not matter.
    expect((await put(g.uploadUrl, png(100), "IMAGE/PNG; foo=bar")).status).toBe(200);
  });

  test("a body over the limit (413) stores nothing, and the URL still works afterwards", async () => {
    const g = await grant({ filename: "big.png", mediaType: "image/png" });
    // With a Content-Length: refused before reading.
    const declared = await put(g.uploadUrl, png(MAX_UPLOAD + 1));
    expect(declared.status).toBe(413);
    expect(declared.json.error?.code).toBe("PAYLOAD_TOO_LARGE");
    // Streamed without a length: refused once the limit is passed.
    const chunk = randomBytes(16 * 1024);
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent > MAX_UPLOAD * 2) controller.close();
        else {
          sent += chunk.length;
          controller.enqueue(new Uint8Array(chunk));
        }
      },
    });
    const streamed = await put(g.uploadUrl, stream, "image/png", { duplex: "half" } as RequestInit);
    expect(streamed.status).toBe(413);
    expect(streamed.json.error?.code).toBe("PAYLOAD_TOO_LARGE");
    expect(await server.objectStore.get(g.key)).toBeNull();
    expect(await uploadRow(g.key)).toMatchObject({ completedAt: null, sha256: null });

    const fine = png(MAX_UPLOAD);
    expect((await put(g.uploadUrl, fine)).status).toBe(200);
    expect((await uploadRow(g.key))?.byteSize).toBe(MAX_UPLOAD);
  });

  test("a body other than the declared size (413 over, 400 under)", async () => {
    const g = await grant({ filename: "a.png", mediaType: "image/png", size: 1_000 });
    expect((await put(g.uploadUrl, png(1_001))).status).toBe(413);
    const short = await put(g.uploadUrl, png(999));
    expect(short.status).toBe(400);
    expect(short.json.error?.code).toBe("VALIDATION_FAILED");
    expect(await server.objectStore.get(g.key)).toBeNull();
    expect((await put(g.uploadUrl, png(1_000))).status).toBe(200);
  });

  test("an unknown key with a valid signature (404)", async () => {
    const url = server.files.uploadUrl(
      `${owner.actor.workspaceId}/00000000-0000-4000-8000-000000000000.png`,
      new Date(Date.now() + 60_000),
    );
    const response = await put(url, png(100));
    expect(response.status).toBe(404);
    expect(response.json.error?.code).toBe("NOT_FOUND");
  });

  test("other methods (405-style 400 with Allow)", async () => {
    const g = await grant({ filename: "a.png", mediaType: "image/png" });
    const response = await fetch(g.uploadUrl, { method: "POST", body: "x", headers: { "content-type": "image/png" } });
    expect(response.status).toBe(400);
    expect(response.headers.get("allow")).toBe("PUT");
  });
});

describe("downloads refuse", () => {
  let key: string;
  let commitId: string;

  beforeAll(async () => {
    key = await upload(png(500));
    commitId = await publish(key);
  });

  test("a tampered link (403) and an expired one (403 LINK_EXPIRED)", async () => {
    const url = new URL(linkFor(key, commitId, owner.userId));
    for (const [param, value] of [
      ["user", member.userId],
      ["document", "00000000-0000-4000-8000-000000000000"],
      ["commit", "00000000-0000-4000-8000-000000000000"],
      ["expires", String(Number(url.searchParams.get("expires")) + 60)],
      ["signature", "nope"],
    ] as const) {
      const tampered = new URL(url);
      tampered.searchParams.set(param, value);
      const response = await fetch(tampered);
      expect(response.status, param).toBe(403);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe("SIGNATURE_INVALID");
    }
    const expired = await fetch(linkFor(key, commitId, owner.userId, new Date(Date.now() - 1_000)));
    expect(expired.status).toBe(403);
    expect(((await expired.json()) as { error: { code: string } }).error.code).toBe("LINK_EXPIRED");
  });

  test("a user who can no longer read the document (404)", async () => {
    const url = linkFor(key, commitId, member.userId);
    expect((await fetch(url)).status).toBe(200);
    await server.callTool("documents", owner.userId, {
      action: "set_permissions",
      documentId,
      grants: [{ userId: member.userId, permission: "none" }],
    });
    const response = await fetch(url);
    expect(response.status).toBe(404);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("NOT_FOUND");
    await server.callTool("documents", owner.userId, {
      action: "set_permissions",
      documentId,
      grants: [{ userId: member.userId, permission: null }],
    });
  });

  test("an upload that is not complete or not in the document's workspace (404)", async () => {
    const pending = await grant({ filename: "p.png", mediaType: "image/png" });
    const response = await fetch(linkFor(pending.key, commitId, owner.userId));
    expect(response.status).toBe(404);
    const unknownDoc = await fetch(
      server.files.downloadUrl({
        key,
        documentId: "00000000-0000-4000-8000-000000000000",
        commitId,
        userId: owner.userId,
        principal: "person",
        expiresAt: new Date(Date.now() + 60_000),
      }),
    );
    expect(unknownDoc.status).toBe(404);
  });

  test("an agent's link (from a token's read) stops working once aiAccess hides the file from agents; the person's does not", async () => {
    const read = await callMcp<{ sections: SectionRead[] }>(mcp, "read", { documentId });
    const agentLink = read.sections.find((s) => s.downloads?.[key])!.downloads![key]!;
    expect(new URL(agentLink).searchParams.get("as")).toBe("agent");
    expect((await fetch(agentLink)).status).toBe(200);
    const asPerson = new URL(agentLink);
    asPerson.searchParams.set("as", "person");
    expect((await fetch(asPerson)).status, "the principal is signed").toBe(403);
    await server.callTool("documents", owner.userId, { action: "set_permissions", documentId, aiAccess: "none" });
    try {
      expect((await fetch(agentLink)).status).toBe(404);
      expect((await fetch(linkFor(key, commitId, owner.userId))).status).toBe(200);
    } finally {
      await server.callTool("documents", owner.userId, { action: "set_permissions", documentId, aiAccess: "edit" });
    }
  });

  test("a key no block holds at the link's commit (404), even for the uploader", async () => {
    const unpublished = await upload(png(300));
    expect((await fetch(linkFor(unpublished, commitId, owner.userId))).status).toBe(404);
    const unknownCommit = await fetch(linkFor(key, "00000000-0000-4000-8000-000000000000", owner.userId));
    expect(unknownCommit.status).toBe(404);
  });

  test("a key held only by a section the user cannot see (404), while a visible one serves", async () => {
    const hiddenKey = await upload(png(400));
    await callMcp(mcp, "documents", { action: "create_branch", documentId, branchName: "hide-file" });
    const block = { blockType: "image", type: "storage", mediaType: "image/png", key: hiddenKey };
    // Hiding a section changes access: a person does it (an API token may not).
    const hidden = await server.callTool("sections", owner.userId, {
      action: "create",
      documentId,
      branchName: "hide-file",
      name: "Hidden file",
      content: [asSent(block)],
      defaultPermission: "none",
    });
    expect((await fetch(linkFor(hiddenKey, hidden.commitId, owner.userId))).status).toBe(200);
    const response = await fetch(linkFor(hiddenKey, hidden.commitId, member.userId));
    expect(response.status).toBe(404);
  });
});

describe("who may reference a storage key", () => {
  let memberMcp: Client;
  let memberDocumentId: string;

  beforeAll(async () => {
    memberMcp = await server.mcpClient(member.token);
    ({ documentId: memberDocumentId } = await callMcp<{ documentId: string }>(memberMcp, "documents", {
      action: "create",
      path: "member-files",
    }));
  });
  afterAll(async () => {
    await memberMcp?.close();
  });

  const storageBlock = (key: string) => ({ blockType: "image", type: "storage", mediaType: "image/png", key });

  test("a member who learns another's key cannot publish it in their own document, so gets no link", async () => {
    const ownersKey = await upload(png(600));
    await callMcp(mcp, "documents", { action: "create", path: "owner-private" });
    const before = await callMcp<{ sections: unknown[] }>(memberMcp, "read", { documentId: memberDocumentId });
    const failure = await callMcpError(memberMcp, "sections", {
      action: "create",
      documentId: memberDocumentId,
      branchName: "main",
      name: "Stolen",
      content: [storageBlock(ownersKey)],
    });
    expect(failure.code).toBe("NOT_FOUND");
    expect(failure.message).toMatch(/upload you can use here/);
    const after = await callMcp<{ sections: unknown[] }>(memberMcp, "read", { documentId: memberDocumentId });
    expect(after.sections).toHaveLength(before.sections.length);
  });

  test("the refusal reads the same as for a key that does not exist", async () => {
    const failure = await callMcpError(memberMcp, "sections", {
      action: "create",
      documentId: memberDocumentId,
      branchName: "main",
      name: "Unknown",
      content: [storageBlock(`${owner.actor.workspaceId}/00000000-0000-4000-8000-000000000000.png`)],
    });
    expect(failure.code).toBe("NOT_FOUND");
    expect(failure.message).toMatch(/upload you can use here/);
  });

  test("a key already visible to the member in a document can be reused there, and the uploader can use theirs anywhere", async () => {
    const ownersKey = await upload(png(700));
    await publish(ownersKey);
    const reused = await callMcp<{ commitId: string }>(memberMcp, "sections", {
      action: "create",
      documentId,
      branchName: "main",
      name: "Same picture again",
      content: [storageBlock(ownersKey)],
    });
    expect((await fetch(linkFor(ownersKey, reused.commitId, member.userId))).status).toBe(200);
    const elsewhere = await callMcpError(memberMcp, "sections", {
      action: "create",
      documentId: memberDocumentId,
      branchName: "main",
      name: "Elsewhere",
      content: [storageBlock(ownersKey)],
    });
    expect(elsewhere.code).toBe("NOT_FOUND");
    const { documentId: second } = await callMcp<{ documentId: string }>(mcp, "documents", { action: "create", path: "owner-second" });
    await callMcp(mcp, "sections", {
      action: "create",
      documentId: second,
      branchName: "main",
      name: "Mine",
      content: [storageBlock(ownersKey)],
    });
  });

  test("updating a section that already holds a key keeps working for someone who did not upload it", async () => {
    const ownersKey = await upload(png(800));
    await publish(ownersKey);
    const doc = await callMcp<{ sections: Array<SectionRead & { name: string; contentHash: string }> }>(memberMcp, "read", { documentId });
    const section = doc.sections.find((s) => s.content.some((b) => b.key === ownersKey))!;
    await callMcp(memberMcp, "sections", {
      action: "update",
      documentId,
      branchName: "main",
      sectionId: section.sectionId,
      expectedContentHash: section.contentHash,
      newContent: [...section.content, { blockType: "text", text: "A caption." }],
    });
  });
});
