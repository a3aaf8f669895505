/**
 * Rate limits through the real faces, against the built app: next-auth's
 * credentials sign-in over HTTP (and the sign-in page in Chromium), MCP and
 * tRPC with bearer tokens, signed file URLs, /share/<token> pages; counts
 * shared by two server instances on one database; constant-work sign-in;
 * X-Forwarded-* trusted only with QUIRE_TRUST_PROXY.
 *
 * The main server trusts the proxy, so each test acts from its own address
 * (X-Forwarded-For) and the counters of one test do not touch another's.
 */
import { afterAll, beforeAll, expect, test, vi } from "vitest";
import { RATE_LIMITS } from "@/server/store/rate-limits";
import { launchChromium } from "../helpers/browser";
import { startTestServer, type TestServer, type TestUser } from "../helpers/server";

/** Counts real argon2 verifications (the real function still runs). */
const argon2 = vi.hoisted(() => ({ verifications: 0 }));
vi.mock("@node-rs/argon2", async (importOriginal) => {
  const real = await importOriginal<typeof import("@node-rs/argon2")>();
  return {
    ...real,
    verify: (...args: Parameters<typeof real.verify>) => {
      argon2.verifications += 1;
      return real.verify(...args);
    },
  };
});

const PASSWORD = "correct horse battery";

let server: TestServer;
let alice: TestUser;
let bob: TestUser;
let carol: TestUser;
let sharePath: string;

beforeAll(async () => {
  server = await startTestServer({ next: true, trustProxy: true });
  alice = await server.createUser("alice@example.test", "Alice", PASSWORD);
  bob = await server.createUser("bob@example.test", "Bob", PASSWORD);
  carol = await server.createUser("carol@example.test", "Carol", PASSWORD);
  const created = await server.callTool("documents", alice.userId, { action: "create", path: "shared/plan", name: "Plan" });
  const link = await server.callTool("documents", alice.userId, {
    action: "create_share_link",
    documentId: created.documentId,
    permission: "read",
  });
  sharePath = link.path;
});

afterAll(async () => {
  await server?.close();
});

interface SignInAnswer {
  status: number;
  error: string | null;
  retryAfter: string | null;
  cookies: string[];
}

/** Signs in through next-auth's credentials endpoint as the sign-in form does, from `address`. */
async function signIn(email: string, password: string, address: string, url = server.url): Promise<SignInAnswer> {
  const headers = { "x-forwarded-for": address };
  const csrf = await fetch(`${url}/api/auth/csrf`, { headers });
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const csrfCookie = csrf.headers
    .getSetCookie()
    .map((c) => c.split(";", 1)[0])
    .join("; ");
  const res = await fetch(`${url}/api/auth/callback/credentials`, {
    method: "POST",
    redirect: "manual",
    headers: { ...headers, "content-type": "application/x-www-form-urlencoded", cookie: csrfCookie, origin: url },
    body: new URLSearchParams({ csrfToken, email, password, json: "true" }),
  });
  const body = (await res.json()) as { url: string };
  return {
    status: res.status,
    error: new URL(body.url).searchParams.get("error"),
    retryAfter: res.headers.get("retry-after"),
    cookies: res.headers.getSetCookie(),
  };
}

const sessionCookieOf = (answer: SignInAnswer): string | undefined =>
  answer.cookies.find((c) => c.startsWith("next-auth.session-token="))?.split(";", 1)[0];

/** A tools/list call over MCP with a bearer token, from `address`. */
function mcpList(token: string, address: string, url = server.url): Promise<Response> {
  return fetch(`${url}/api/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "x-forwarded-for": address,
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
}

/** The tRPC `members` query with a bearer token, from `address`. */
function trpcMembers(token: string, address: string): Promise<Response> {
  const input = encodeURIComponent(JSON.stringify({ action: "list" }));
  return fetch(`${server.url}/api/trpc/members?input=${input}`, {
    headers: { authorization: `Bearer ${token}`, "x-forwarded-for": address },
  });
}

const badToken = (i: number) => `qk_${"x".repeat(40)}${i}`;

async function expectRateLimitedJson(res: Response): Promise<void> {
  expect(res.status).toBe(429);
  expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
  expect(((await res.json()) as { error: { code: string } }).error.code).toBe("RATE_LIMITED");
}

test("the 11th sign-in for one account from one address is refused with 429 even with the right password; other accounts and addresses are unaffected", async () => {
  const address = "203.0.113.11";
  for (let i = 1; i <= RATE_LIMITS.signInAccount.points; i++) {
    const wrong = await signIn(alice.email, `wrong password ${i}`, address);
    expect([wrong.status, wrong.error]).toEqual([401, "CredentialsSignin"]);
  }
  const refused = await signIn(alice.email, PASSWORD, address);
  expect(refused.status).toBe(429);
  expect(refused.error).toMatch(/^RATE_LIMITED:\d+$/);
  const retryAfter = Number(refused.retryAfter);
  expect(retryAfter).toBeGreaterThan(RATE_LIMITS.signInAccount.durationSeconds - 120);
  expect(retryAfter).toBeLessThanOrEqual(RATE_LIMITS.signInAccount.durationSeconds);
  expect(sessionCookieOf(refused)).toBeUndefined();
  // The email in another case is the same account.
  expect((await signIn(alice.email.toUpperCase(), PASSWORD, address)).status).toBe(429);

  // Another account from the same address, and the same account from another address, sign in.
  const other = await signIn(bob.email, PASSWORD, address);
  expect(other.status).toBe(200);
  expect(sessionCookieOf(other)).toBeDefined();
  const elsewhere = await signIn(alice.email, PASSWORD, "203.0.113.12");
  expect(elsewhere.status).toBe(200);
  expect(sessionCookieOf(elsewhere)).toBeDefined();
});

test("a successful sign-in resets the account's count", async () => {
  const address = "203.0.113.21";
  const limit = RATE_LIMITS.signInAccount.points;
  for (let i = 1; i < limit; i++) expect((await signIn(carol.email, "wrong password", address)).status).toBe(401);
  expect((await signIn(carol.email, PASSWORD, address)).status).toBe(200);
  for (let i = 1; i <= limit; i++) expect((await signIn(carol.email, "wrong password", address)).status).toBe(401);
  expect((await signIn(carol.email, PASSWORD, address)).status).toBe(429);
});

test("one address gets 100 failed sign-ins in 15 minutes, whatever the emails", async () => {
  const address = "203.0.113.31";
  const limit = RATE_LIMITS.signInAddress.points;
  for (let batch = 0; batch < limit; batch += 10) {
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) => signIn(`nobody${batch + i}@example.test`, "wrong password", address)),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(401));
  }
  const refused = await signIn(bob.email, PASSWORD, address);
  expect(refused.status).toBe(429);
  expect(refused.error).toMatch(/^RATE_LIMITED:/);
  expect((await signIn(bob.email, PASSWORD, "203.0.113.32")).status).toBe(200);
});

test("an unknown email costs the same argon2 verification as a known one", async () => {
  const before = argon2.verifications;
  const unknown = await signIn("no-such-person@example.test", "some password", "203.0.113.41");
  expect([unknown.status, unknown.error]).toEqual([401, "CredentialsSignin"]);
  expect(argon2.verifications - before).toBe(1);

  const known = await signIn(bob.email, "a wrong password", "203.0.113.41");
  expect([known.status, known.error]).toEqual([401, "CredentialsSignin"]);
  expect(argon2.verifications - before).toBe(2);
});

test("the sign-in page says how long to wait once the attempts are used up", async () => {
  const address = "203.0.113.51";
  for (let i = 0; i < RATE_LIMITS.signInAccount.points; i++) await signIn(bob.email, "wrong password", address);
  const browser = await launchChromium();
  try {
    const context = await browser.newContext({ extraHTTPHeaders: { "x-forwarded-for": address } });
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    await page.goto(`${server.url}/signin`);
    await page.getByLabel("Email").fill(bob.email);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    const alert = page.locator(".form-error");
    await alert.waitFor();
    expect(await alert.textContent()).toBe("Too many attempts; try again in 15 minutes.");
    expect(new URL(page.url()).pathname).toBe("/signin");
  } finally {
    await browser.close();
  }
  // A redirect to the page (a sign-in without JavaScript) says the same.
  const html = await (await fetch(`${server.url}/signin?error=${encodeURIComponent("RATE_LIMITED:840")}`)).text();
  expect(html).toContain("Too many attempts; try again in 14 minutes.");
});

test("invalid bearer tokens: after 50 from one address, MCP and tRPC answer 429, even to a valid token", async () => {
  const address = "198.51.100.11";
  const limit = RATE_LIMITS.apiCredential.points;
  for (let i = 0; i < limit; i++) {
    const res = await (i % 2 === 0 ? mcpList(badToken(i), address) : trpcMembers(badToken(i), address));
    expect(res.status).toBe(401);
    await res.arrayBuffer();
  }
  await expectRateLimitedJson(await mcpList(badToken(999), address));
  await expectRateLimitedJson(await mcpList(alice.token, address));

  const trpc = await trpcMembers(alice.token, address);
  expect(trpc.status).toBe(429);
  expect(Number(trpc.headers.get("retry-after"))).toBeGreaterThan(0);
  expect(((await trpc.json()) as { error: { data: { error: { code: string } } } }).error.data.error.code).toBe("RATE_LIMITED");

  // Another address is not affected.
  const fine = await mcpList(alice.token, "198.51.100.12");
  expect(fine.status).toBe(200);
  await fine.arrayBuffer();
  expect((await trpcMembers(alice.token, "198.51.100.12")).status).toBe(200);
});

const FILE_KEY = "6f1c2f0e-4b8e-4d2a-9c51-0d6f3a7e9b10/2a4d6c8e-1b3f-4a5c-8d7e-9f0a1b2c3d4e.png";

test("refused signed file URLs count against the address too", async () => {
  const address = "198.51.100.21";
  for (let i = 0; i < RATE_LIMITS.apiCredential.points; i++) {
    const res = await fetch(
      `${server.url}/api/files/${FILE_KEY}?document=${FILE_KEY.slice(0, 36)}&user=u&expires=9999999999&signature=bad${i}`,
      {
        headers: { "x-forwarded-for": address },
      },
    );
    expect(res.status).toBe(403);
    await res.arrayBuffer();
  }
  await expectRateLimitedJson(
    await fetch(`${server.url}/api/files/${FILE_KEY}?signature=again`, { headers: { "x-forwarded-for": address } }),
  );
  await expectRateLimitedJson(await mcpList(alice.token, address));
});

test("unknown share links: after 50 from one address, /share/ answers 429, even for a live link", async () => {
  const address = "198.51.100.31";
  const live = await fetch(`${server.url}${sharePath}`, { headers: { "x-forwarded-for": address } });
  expect(live.status).toBe(200);
  expect(await live.text()).toContain("Plan");
  for (let i = 0; i < RATE_LIMITS.shareLink.points; i++) {
    const res = await fetch(`${server.url}/share/guess-${String(i).padStart(40, "0")}`, { headers: { "x-forwarded-for": address } });
    expect(res.status).toBe(404);
    await res.arrayBuffer();
  }
  const refused = await fetch(`${server.url}${sharePath}`, { headers: { "x-forwarded-for": address, accept: "text/html" } });
  expect(refused.status).toBe(429);
  expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
  expect(await refused.text()).toContain("Too many attempts; try again in 15 minutes.");
  await expectRateLimitedJson(
    await fetch(`${server.url}/share/guess-again-000000000000000000000000`, { headers: { "x-forwarded-for": address } }),
  );

  const elsewhere = await fetch(`${server.url}${sharePath}`, { headers: { "x-forwarded-for": "198.51.100.32" } });
  expect(elsewhere.status).toBe(200);
  await elsewhere.arrayBuffer();
});

// The tests below start a second server on the same database (which then serves the app's bridge too), so they come last.

test("the limits hold across two server instances on one database", async () => {
  const second = await startTestServer({ database: server.database, trustProxy: true });
  try {
    const address = "198.51.100.41";
    const limit = RATE_LIMITS.apiCredential.points;
    for (let i = 0; i < limit; i++) {
      const res = await mcpList(badToken(i), address, i % 2 === 0 ? server.url : second.url);
      expect(res.status).toBe(401);
      await res.arrayBuffer();
    }
    await expectRateLimitedJson(await mcpList(badToken(1000), address, server.url));
    await expectRateLimitedJson(await mcpList(badToken(1001), address, second.url));
    await expectRateLimitedJson(await mcpList(alice.token, address, second.url));
  } finally {
    await second.close();
  }
});

test("X-Forwarded-Host and X-Forwarded-For are ignored unless the proxy is trusted", async () => {
  const session = sessionCookieOf(await signIn(bob.email, PASSWORD, "198.51.100.51"));
  expect(session).toBeDefined();
  const call = (url: string, headers: Record<string, string>) =>
    fetch(`${url}/api/trpc/workspace`, {
      method: "POST",
      headers: { cookie: session!, "content-type": "application/json", ...headers },
      body: JSON.stringify({ action: "list_members" }),
    });
  const forged = { origin: "http://evil.example", "x-forwarded-host": "evil.example" };

  // The main server trusts its proxy: the forwarded host is the site's own.
  expect((await call(server.url, forged)).status).toBe(200);

  const direct = await startTestServer({ database: server.database });
  try {
    const refused = await call(direct.url, forged);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("CSRF_REJECTED");
    expect((await call(direct.url, { origin: direct.url })).status).toBe(200);

    // Without a trusted proxy the client address is the socket's: a made-up X-Forwarded-For does not escape the limit.
    for (let i = 0; i < RATE_LIMITS.apiCredential.points; i++) {
      const res = await mcpList(badToken(i), `192.0.2.${i}`, direct.url);
      expect(res.status).toBe(401);
      await res.arrayBuffer();
    }
    await expectRateLimitedJson(await mcpList(badToken(2000), "192.0.2.200", direct.url));
  } finally {
    await direct.close();
  }
});
