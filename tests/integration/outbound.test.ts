/**
 * The outbound guard (server/outbound): every outbound request refuses plain
 * http outside development, loopback / private / link-local / multicast /
 * unspecified addresses unless a setting opens them (IPv4-mapped IPv6 judged
 * as the IPv4 address it carries), checks the address actually connected to
 * (a name resolving to loopback is refused at connection time, not only at
 * registration), follows no redirect, and stops at a size and a time limit.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { loadConfig } from "@/server/config";
import { isDomainError } from "@/server/core/errors";
import { addressAllowed, checkOutboundUrl, DEFAULT_OUTBOUND_SETTINGS, type OutboundSettings } from "@/server/outbound/addresses";
import { outboundRequest } from "@/server/outbound/request";

const publicOnly: OutboundSettings = { ...DEFAULT_OUTBOUND_SETTINGS, allowHttp: true };
const loopbackAllowed: OutboundSettings = { ...publicOnly, allow: ["loopback"] };

let receiver: Server;
let base: string;
const hits: string[] = [];

async function codeOf(promise: Promise<unknown>): Promise<{ code: string; reason: unknown }> {
  try {
    await promise;
  } catch (error) {
    if (isDomainError(error)) return { code: error.code, reason: error.details?.reason };
    throw error;
  }
  throw new Error("expected a refusal");
}

beforeAll(async () => {
  receiver = createServer((req, res) => {
    hits.push(req.url ?? "");
    if (req.url === "/redirect") {
      res.writeHead(302, { location: `${base}/target` }).end();
    } else if (req.url === "/large") {
      res.writeHead(200, { "content-length": "4096" }).end("x".repeat(4096));
    } else if (req.url === "/large-chunked") {
      res.writeHead(200);
      for (let i = 0; i < 8; i++) res.write("y".repeat(1024));
      res.end();
    } else if (req.url === "/slow") {
      res.writeHead(200);
      res.write("started");
      // Never ends: the time limit must cut it off.
    } else {
      let body = "";
      req.on("data", (chunk: Buffer) => {
        body += chunk.toString();
      });
      req.on("end", () => res.writeHead(200, { "content-type": "text/plain" }).end(`got ${req.method} ${body}`));
    }
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});

afterAll(async () => {
  receiver.closeAllConnections();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
});

describe("which addresses are reachable", () => {
  test.each([
    ["127.0.0.1", false],
    ["::1", false],
    ["::ffff:127.0.0.1", false],
    ["::ffff:7f00:1", false],
    ["10.1.2.3", false],
    ["172.16.0.1", false],
    ["192.168.1.1", false],
    ["100.64.0.1", false],
    ["fd00::1", false],
    ["169.254.169.254", false],
    ["fe80::1", false],
    ["224.0.0.1", false],
    ["ff02::1", false],
    ["0.0.0.0", false],
    ["::", false],
    ["255.255.255.255", false],
    ["93.184.216.34", true],
    ["2606:2800:220:1:248:1893:25c8:1946", true],
    ["::ffff:93.184.216.34", true],
    ["not-an-address", false],
  ])("%s, no opening: %s", (address, allowed) => {
    expect(addressAllowed(address, publicOnly)).toBe(allowed);
  });

  test("the loopback opening lets loopback through (IPv4, IPv6, IPv4-mapped) and nothing else", () => {
    for (const address of ["127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1"])
      expect(addressAllowed(address, loopbackAllowed)).toBe(true);
    for (const address of ["10.0.0.1", "169.254.169.254", "fe80::1", "0.0.0.0"])
      expect(addressAllowed(address, loopbackAllowed)).toBe(false);
  });

  test("the private opening lets private ranges through, never link-local (cloud metadata)", () => {
    const privateAllowed = { allow: ["private"] as const };
    for (const address of ["10.0.0.1", "192.168.0.2", "fd12::3", "::ffff:10.0.0.1"])
      expect(addressAllowed(address, privateAllowed)).toBe(true);
    for (const address of ["127.0.0.1", "169.254.169.254", "fe80::1"]) expect(addressAllowed(address, privateAllowed)).toBe(false);
  });

  test("QUIRE_OUTBOUND_ALLOW_PRIVATE and QUIRE_OUTBOUND_ALLOW_HTTP configure it; an unknown kind names the variable", () => {
    const env = (values: Record<string, string>) => values as unknown as NodeJS.ProcessEnv;
    expect(loadConfig(env({})).outbound).toMatchObject({ allowHttp: false, allow: [] });
    expect(loadConfig(env({ QUIRE_OUTBOUND_ALLOW_PRIVATE: "loopback, private", QUIRE_OUTBOUND_ALLOW_HTTP: "1" })).outbound).toMatchObject({
      allowHttp: true,
      allow: ["loopback", "private"],
    });
    expect(() => loadConfig(env({ QUIRE_OUTBOUND_ALLOW_PRIVATE: "link-local" }))).toThrow(/QUIRE_OUTBOUND_ALLOW_PRIVATE/);
  });
});

describe("checking a URL before it is stored", () => {
  test("https only unless http is allowed; not a URL refused", async () => {
    expect(await codeOf(checkOutboundUrl("http://example.com/hook", DEFAULT_OUTBOUND_SETTINGS))).toEqual({
      code: "OUTBOUND_REFUSED",
      reason: "scheme",
    });
    expect(await codeOf(checkOutboundUrl("ftp://example.com/x", publicOnly))).toEqual({ code: "OUTBOUND_REFUSED", reason: "scheme" });
    expect(await codeOf(checkOutboundUrl("not a url", publicOnly))).toEqual({ code: "OUTBOUND_REFUSED", reason: "url" });
  });

  test("a literal private address or a name resolving to loopback is refused; allowed with the loopback opening", async () => {
    expect(await codeOf(checkOutboundUrl(`${base}/hook`, publicOnly))).toEqual({ code: "OUTBOUND_REFUSED", reason: "address" });
    expect(await codeOf(checkOutboundUrl("http://[::ffff:127.0.0.1]/hook", publicOnly))).toEqual({
      code: "OUTBOUND_REFUSED",
      reason: "address",
    });
    expect(await codeOf(checkOutboundUrl("http://localhost/hook", publicOnly))).toEqual({ code: "OUTBOUND_REFUSED", reason: "address" });
    expect(await codeOf(checkOutboundUrl("https://169.254.169.254/latest", loopbackAllowed))).toEqual({
      code: "OUTBOUND_REFUSED",
      reason: "address",
    });
    expect((await checkOutboundUrl(`${base}/hook`, loopbackAllowed)).pathname).toBe("/hook");
  });
});

describe("sending", () => {
  test("loopback is refused by default before anything is sent, by literal address and by name", async () => {
    const before = hits.length;
    expect(await codeOf(outboundRequest({ url: `${base}/a`, method: "POST", body: "x" }, publicOnly))).toEqual({
      code: "OUTBOUND_REFUSED",
      reason: "address",
    });
    // A name is checked inside the connection's own lookup: the address connected to is the one judged.
    const byName = base.replace("127.0.0.1", "localhost");
    expect(await codeOf(outboundRequest({ url: `${byName}/b` }, publicOnly))).toEqual({ code: "OUTBOUND_REFUSED", reason: "address" });
    expect(hits.length).toBe(before);
  });

  test("allowed by the loopback setting: the request is sent and its answer read", async () => {
    const response = await outboundRequest(
      { url: `${base}/echo`, method: "POST", body: "hello", headers: { "content-type": "text/plain" } },
      loopbackAllowed,
    );
    expect(response.status).toBe(200);
    expect(response.body.toString()).toBe("got POST hello");
    expect(response.address).toBe("127.0.0.1");
  });

  test("a redirect is the answer, not followed", async () => {
    const before = hits.filter((hit) => hit === "/target").length;
    const response = await outboundRequest({ url: `${base}/redirect` }, loopbackAllowed);
    expect(response.status).toBe(302);
    expect(hits.filter((hit) => hit === "/target").length).toBe(before);
  });

  test("a response larger than the limit fails (declared length and streamed alike)", async () => {
    expect(await codeOf(outboundRequest({ url: `${base}/large`, maxResponseBytes: 1024 }, loopbackAllowed))).toEqual({
      code: "OUTBOUND_FAILED",
      reason: "too_large",
    });
    expect(await codeOf(outboundRequest({ url: `${base}/large-chunked`, maxResponseBytes: 3000 }, loopbackAllowed))).toEqual({
      code: "OUTBOUND_FAILED",
      reason: "too_large",
    });
    expect((await outboundRequest({ url: `${base}/large`, maxResponseBytes: 4096 }, loopbackAllowed)).body.length).toBe(4096);
  });

  test("a receiver that never finishes is cut off at the time limit", async () => {
    const started = Date.now();
    expect(await codeOf(outboundRequest({ url: `${base}/slow`, timeoutMs: 300 }, loopbackAllowed))).toEqual({
      code: "OUTBOUND_FAILED",
      reason: "timeout",
    });
    expect(Date.now() - started).toBeLessThan(3000);
  });

  test("nothing listening: a coded network failure", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    expect(await codeOf(outboundRequest({ url: `http://127.0.0.1:${port}/` }, loopbackAllowed))).toEqual({
      code: "OUTBOUND_FAILED",
      reason: "network",
    });
  });
});
