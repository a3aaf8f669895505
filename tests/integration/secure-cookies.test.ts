/**
 * With an https public URL (a TLS-terminating proxy in front of Quire),
 * next-auth sets the session cookie as `__Secure-next-auth.session-token`
 * with the Secure flag, and the server's own session reading (tRPC, CSRF
 * guard) reads that cookie and no other. Its own file: next-auth's URL is
 * process-wide, and this server's differs from the other tests'.
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import { startTestServer, type TestServer, type TestUser } from "../helpers/server";

const PUBLIC_URL = "https://quire.example.test";
const PASSWORD = "correct horse battery";

let server: TestServer;
let user: TestUser;

beforeAll(async () => {
  server = await startTestServer({ next: true, publicUrl: PUBLIC_URL });
  user = await server.createUser("dana@example.test", "Dana", PASSWORD);
});

afterAll(async () => {
  await server?.close();
});

async function signIn(email: string, password: string): Promise<string[]> {
  const csrf = await fetch(`${server.url}/api/auth/csrf`);
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const csrfCookie = csrf.headers
    .getSetCookie()
    .map((c) => c.split(";", 1)[0])
    .join("; ");
  const res = await fetch(`${server.url}/api/auth/callback/credentials`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: csrfCookie, origin: PUBLIC_URL },
    body: new URLSearchParams({ csrfToken, email, password, json: "true" }),
  });
  expect(res.status).toBe(200);
  await res.arrayBuffer();
  return res.headers.getSetCookie();
}

const listMembers = (cookie: string) =>
  fetch(`${server.url}/api/trpc/workspace`, {
    method: "POST",
    headers: { cookie, "content-type": "application/json", origin: PUBLIC_URL },
    body: JSON.stringify({ action: "list_members" }),
  });

test("with an https public URL the session cookie is __Secure- prefixed and Secure, and the session works", async () => {
  const setCookies = await signIn(user.email, PASSWORD);
  const session = setCookies.find((c) => c.startsWith("__Secure-next-auth.session-token="));
  expect(session, setCookies.join("\n")).toBeDefined();
  expect(session).toMatch(/;\s*Secure(;|$)/i);
  expect(session).toMatch(/;\s*HttpOnly/i);
  expect(setCookies.some((c) => c.startsWith("next-auth.session-token="))).toBe(false);
  const cookie = session!.split(";", 1)[0]!;

  // next-auth reads it back...
  const sessionRes = await fetch(`${server.url}/api/auth/session`, { headers: { cookie } });
  expect(((await sessionRes.json()) as { user?: { email?: string } }).user?.email).toBe(user.email);

  // ...and so does the server's own session reading (tRPC behind the CSRF guard).
  const ok = await listMembers(cookie);
  expect(ok.status).toBe(200);
  expect(((await ok.json()) as { result: { data: { members: Array<{ email: string }> } } }).result.data.members[0]!.email).toBe(user.email);

  // The same token under the plain name (as a sibling host could plant over http) is not a session.
  const planted = await listMembers(`next-auth.session-token=${cookie.slice(cookie.indexOf("=") + 1)}`);
  expect(planted.status).toBe(401);
});
