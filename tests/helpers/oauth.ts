/**
 * OAuth access tokens for tests that need an OAuth app's principal but not
 * the flow itself (tests/integration/oauth.test.ts runs the flow through the
 * SDK client): a registered public client, the person's consent answered from
 * the site's own origin with their session, the code exchanged with its PKCE
 * verifier. And the SDK client's OAuth state, in memory, for the tests that
 * run its flow.
 */
import { createHash } from "node:crypto";
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { encode } from "next-auth/jwt";
import { ensureAuthSecret } from "@/server/auth/accounts";
import { sessionCookieName } from "@/server/auth/web-session";
import type { TestServer } from "./server";

const REDIRECT_URI = "http://127.0.0.1:9/callback";

export interface OAuthApp {
  clientId: string;
  accessToken: string;
  refreshToken: string;
}

async function expectOk(res: Response, what: string): Promise<Response> {
  if (res.status >= 400) throw new Error(`${what}: ${res.status} ${await res.text()}`);
  return res;
}

/** Connects an app named `name` for the user, allowed `decision` (read and write, or read only). */
export async function connectOAuthApp(
  server: Pick<TestServer, "url" | "db">,
  userId: string,
  options: { name?: string; decision?: "allow_write" | "allow_read" } = {},
): Promise<OAuthApp> {
  const registered = await expectOk(
    await fetch(`${server.url}/oauth/register`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_name: options.name ?? "Test App", redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: "none" }),
    }),
    "register",
  );
  const { client_id: clientId } = (await registered.json()) as { client_id: string };
  const verifier = crypto.randomUUID() + crypto.randomUUID();
  const form = new URLSearchParams({
    client_id: clientId,
    redirect_uri: REDIRECT_URI,
    response_type: "code",
    code_challenge: createHash("sha256").update(verifier).digest("base64url"),
    code_challenge_method: "S256",
    scope: "read write",
    decision: options.decision ?? "allow_write",
  });
  const secret = await ensureAuthSecret(server.db, undefined);
  const cookie = `${sessionCookieName(false)}=${await encode({ token: { sub: userId }, secret })}`;
  const answered = await fetch(`${server.url}/oauth/authorize/decision`, {
    method: "POST",
    redirect: "manual",
    headers: { cookie, origin: server.url, "content-type": "application/x-www-form-urlencoded" },
    body: form,
  });
  const code = new URL(answered.headers.get("location") ?? "http://invalid/").searchParams.get("code");
  if (!code) throw new Error(`consent: ${answered.status} ${answered.headers.get("location")}`);
  const exchanged = await expectOk(
    await fetch(`${server.url}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code,
        code_verifier: verifier,
        client_id: clientId,
        redirect_uri: REDIRECT_URI,
      }),
    }),
    "token",
  );
  const tokens = (await exchanged.json()) as { access_token: string; refresh_token: string };
  return { clientId, accessToken: tokens.access_token, refreshToken: tokens.refresh_token };
}

/** An MCP client's OAuth state, in memory, as the SDK's examples keep it; the authorization URL it was sent to is kept for the test to open. */
export class MemoryProvider implements OAuthClientProvider {
  client?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = "";
  authorizationUrl?: URL;
  readonly clientMetadata: OAuthClientMetadata;
  constructor(
    readonly redirectUrl: string,
    clientName = "Test Agent",
  ) {
    this.clientMetadata = { client_name: clientName, redirect_uris: [redirectUrl], token_endpoint_auth_method: "none" };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}
