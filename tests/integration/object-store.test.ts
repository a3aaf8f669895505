/**
 * The object stores: local disk (key validation, no partial files) and the
 * S3-compatible store, really exercised against a tiny in-process fake S3
 * (path-style PUT/GET/DELETE object), alone and behind a running Quire.
 */
import { createHash, randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { loadConfig } from "@/server/config";
import { createObjectStore } from "@/server/storage";
import { LocalObjectStore } from "@/server/storage/local";
import { storageKeyProblem, type ObjectStore } from "@/server/storage/object-store";
import { S3ObjectStore } from "@/server/storage/s3";
import { callMcp, startTestServer } from "../helpers/server";

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

async function readAll(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

/** A fake S3: path-style /<bucket>/<key>, PUT/GET/DELETE object, SigV4 header required (not verified). */
function fakeS3(bucket: string, accessKeyId: string) {
  const objects = new Map<string, { body: Buffer; contentType: string }>();
  const requests: Array<{ method: string; path: string; headers: IncomingMessage["headers"] }> = [];
  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://s3.local");
    requests.push({ method: req.method ?? "", path: url.pathname, headers: req.headers });
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const xmlError = (status: number, code: string) => {
      res.writeHead(status, { "content-type": "application/xml" });
      res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${code}</Message></Error>`);
    };
    if (!String(req.headers.authorization ?? "").startsWith(`AWS4-HMAC-SHA256 Credential=${accessKeyId}/`))
      return xmlError(403, "AccessDenied");
    const prefix = `/${bucket}/`;
    if (!url.pathname.startsWith(prefix)) return xmlError(404, "NoSuchBucket");
    const key = decodeURIComponent(url.pathname.slice(prefix.length));
    if (req.method === "PUT") {
      const body = Buffer.concat(chunks);
      if (req.headers["content-length"] !== String(body.length)) return xmlError(400, "IncompleteBody");
      objects.set(key, { body, contentType: String(req.headers["content-type"] ?? "") });
      res.writeHead(200, { etag: `"${createHash("md5").update(body).digest("hex")}"` });
      return res.end();
    }
    if (req.method === "GET") {
      const object = objects.get(key);
      if (!object) return xmlError(404, "NoSuchKey");
      res.writeHead(200, { "content-type": object.contentType, "content-length": String(object.body.length) });
      return res.end(object.body);
    }
    if (req.method === "DELETE") {
      objects.delete(key);
      res.writeHead(204);
      return res.end();
    }
    xmlError(405, "MethodNotAllowed");
  });
  return {
    objects,
    requests,
    async start(): Promise<string> {
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The contract both stores keep. */
function storeContract(name: string, open: () => ObjectStore, after: { isEmpty(): Promise<boolean> }) {
  describe(`${name} store`, () => {
    test("put, get, delete round trip with size and sha256", async () => {
      const store = open();
      const bytes = randomBytes(100_000);
      const key = "ws-1/0b7e0c7e-2f7c-4c2e-9b7a-1d2b3c4d5e6f.png";
      const stored = await store.put(key, Readable.from([bytes.subarray(0, 50_000), bytes.subarray(50_000)]), {
        maxBytes: 200_000,
        contentType: "image/png",
      });
      expect(stored).toEqual({ byteSize: bytes.length, sha256: sha256(bytes) });
      const got = await store.get(key);
      expect(got?.byteSize).toBe(bytes.length);
      expect(sha256(await readAll(got!.body))).toBe(sha256(bytes));
      await store.delete(key);
      expect(await store.get(key)).toBeNull();
      await store.delete(key); // missing is fine
      expect(await store.get("ws-1/never.png")).toBeNull();
    });

    test("over the byte cap: PAYLOAD_TOO_LARGE and nothing stored", async () => {
      const store = open();
      const key = "ws-1/too-big.bin";
      await expect(
        store.put(key, Readable.from([randomBytes(600), randomBytes(600)]), { maxBytes: 1_000, contentType: "application/zip" }),
      ).rejects.toMatchObject({
        code: "PAYLOAD_TOO_LARGE",
      });
      expect(await store.get(key)).toBeNull();
      expect(await after.isEmpty()).toBe(true);
    });

    test("refuses unsafe keys on every operation", async () => {
      const store = open();
      for (const key of ["../x", "a/../../x", "/etc/passwd", "a//b", "a/./b", "a\\b", "a b", "a%2e%2e", "", "x".repeat(513)]) {
        await expect(
          store.put(key, Readable.from([Buffer.from("x")]), { maxBytes: 10, contentType: "text/plain" }),
          key,
        ).rejects.toMatchObject({
          code: "VALIDATION_FAILED",
        });
        await expect(store.get(key), key).rejects.toMatchObject({ code: "VALIDATION_FAILED" });
        await expect(store.delete(key), key).rejects.toMatchObject({ code: "VALIDATION_FAILED" });
      }
      expect(await after.isEmpty()).toBe(true);
    });
  });
}

test("storage key rules", () => {
  expect(storageKeyProblem("0b7e0c7e-2f7c-4c2e-9b7a-1d2b3c4d5e6f/1d2b3c4d-2f7c-4c2e-9b7a-0b7e0c7e5e6f.tar")).toBeNull();
  expect(storageKeyProblem("a/b.c_d-e")).toBeNull();
  for (const bad of ["..", "a/..", "./a", "/a", "a/", "a\u0000b", "a:b", "é"]) expect(storageKeyProblem(bad), bad).not.toBeNull();
});

let localRoot: string;
beforeAll(async () => {
  localRoot = await mkdtemp(path.join(os.tmpdir(), "quire-store-test-"));
});
afterAll(async () => {
  await rm(localRoot, { recursive: true, force: true });
});

async function filesUnder(dir: string): Promise<string[]> {
  if (!existsSync(dir)) return [];
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => e.name);
}

storeContract("local", () => new LocalObjectStore(path.join(localRoot, "uploads")), {
  isEmpty: async () => (await filesUnder(path.join(localRoot, "uploads"))).length === 0,
});

const s3 = fakeS3("quire-test", "AKIDQUIRETEST");
let s3Endpoint: string;
const s3Store = () =>
  new S3ObjectStore({
    bucket: "quire-test",
    endpoint: s3Endpoint,
    region: "us-east-1",
    accessKeyId: "AKIDQUIRETEST",
    secretAccessKey: "not-a-real-secret",
    forcePathStyle: true,
  });

describe("S3", () => {
  beforeAll(async () => {
    s3Endpoint = await s3.start();
  });
  afterAll(async () => {
    await s3.close();
  });

  storeContract("s3", s3Store, { isEmpty: async () => s3.objects.size === 0 });

  test("PUTs path-style with an exact Content-Length, the content type, and no aws-chunked encoding", async () => {
    const store = s3Store();
    s3.requests.length = 0;
    await store.put("ws/k.csv", Readable.from([Buffer.from("a,b\n1,2\n")]), { maxBytes: 100, contentType: "text/csv" });
    const putRequest = s3.requests.find((r) => r.method === "PUT")!;
    expect(putRequest.path).toBe("/quire-test/ws/k.csv");
    expect(putRequest.headers["content-length"]).toBe("8");
    expect(putRequest.headers["content-type"]).toBe("text/csv");
    expect(putRequest.headers["content-encoding"] ?? "").not.toMatch(/aws-chunked/);
    expect(s3.objects.get("ws/k.csv")?.body.toString()).toBe("a,b\n1,2\n");
    await store.delete("ws/k.csv");
  });

  test("configuration selects S3 when QUIRE_S3_BUCKET is set, local disk otherwise", () => {
    const config = loadConfig({
      QUIRE_DATA_DIR: localRoot,
      QUIRE_S3_BUCKET: "quire-test",
      QUIRE_S3_ENDPOINT: s3Endpoint,
      QUIRE_S3_ACCESS_KEY_ID: "AKIDQUIRETEST",
      QUIRE_S3_SECRET_ACCESS_KEY: "x",
      QUIRE_S3_FORCE_PATH_STYLE: "true",
      QUIRE_MAX_UPLOAD_BYTES: "1000",
    } as Record<string, string> as unknown as NodeJS.ProcessEnv);
    expect(config.s3).toEqual({
      bucket: "quire-test",
      endpoint: s3Endpoint,
      region: "us-east-1",
      accessKeyId: "AKIDQUIRETEST",
      secretAccessKey: "x",
      forcePathStyle: true,
    });
    expect(config.maxUploadBytes).toBe(1000);
    expect(createObjectStore(config).kind).toBe("s3");
    const local = loadConfig({ QUIRE_DATA_DIR: localRoot } as Record<string, string> as unknown as NodeJS.ProcessEnv);
    expect(local.s3).toBeUndefined();
    expect(local.maxUploadBytes).toBe(25 * 1024 * 1024);
    const store = createObjectStore(local);
    expect(store).toBeInstanceOf(LocalObjectStore);
    expect((store as LocalObjectStore).root).toBe(path.join(localRoot, "uploads"));
  });

  test("a Quire server on the S3 store: upload, then download the same bytes", async () => {
    const server = await startTestServer({ objectStore: s3Store() });
    try {
      const owner = await server.createUser("s3owner@example.test", "S3 Owner");
      const mcp = await server.mcpClient(owner.token);
      const { documentId } = await callMcp<{ documentId: string }>(mcp, "documents", { action: "create", path: "s3-doc" });
      const bytes = randomBytes(40_000);
      const grant = await callMcp<{ uploadUrl: string; key: string; headers: Record<string, string> }>(mcp, "upload_url", {
        filename: "archive.zip",
        mediaType: "application/zip",
        size: bytes.length,
      });
      const put = await fetch(grant.uploadUrl, { method: "PUT", headers: grant.headers, body: new Uint8Array(bytes) });
      expect(put.status).toBe(200);
      expect(s3.objects.get(grant.key)?.body.equals(bytes)).toBe(true);
      const block = { blockType: "file", type: "storage", mediaType: "application/zip", key: grant.key, filename: "archive.zip" };
      await callMcp(mcp, "sections", { action: "create", documentId, branchName: "main", name: "Archive", content: [block] });
      const read = await callMcp<{ sections: Array<{ downloads: Record<string, string> }> }>(mcp, "read", { documentId });
      const response = await fetch(read.sections[0]!.downloads[grant.key]!);
      expect(response.status).toBe(200);
      expect(response.headers.get("content-disposition")).toMatch(/^attachment;/);
      expect(sha256(new Uint8Array(await response.arrayBuffer()))).toBe(sha256(bytes));
      await mcp.close();
    } finally {
      await server.close();
    }
  });
});
