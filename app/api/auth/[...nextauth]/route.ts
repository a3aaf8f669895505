import NextAuth from "next-auth";
import { ERROR_FACES } from "@/server/core/errors";
import { authOptions } from "@/app/_lib/next-auth-options";
import { rateLimitedSignInWait } from "@/server/auth/sign-in-errors";

const handler = NextAuth(authOptions);

type RouteContext = { params: Promise<{ nextauth: string[] }> };

/** The `error` parameter of the URL next-auth answers with (Location, or `{ url }` for JSON callers). */
async function answeredError(response: Response): Promise<string | null> {
  let target = response.headers.get("location");
  if (!target && response.headers.get("content-type")?.includes("application/json")) {
    const body = (await response
      .clone()
      .json()
      .catch(() => null)) as { url?: unknown } | null;
    target = typeof body?.url === "string" ? body.url : null;
  }
  if (!target) return null;
  try {
    return new URL(target, "http://localhost").searchParams.get("error");
  } catch {
    return null;
  }
}

/**
 * next-auth answers every failed credentials sign-in with 401; a rate-limited
 * one (see next-auth-options.ts) gets 429 with Retry-After instead.
 */
async function handle(req: Request, context: RouteContext): Promise<Response> {
  const response: Response = await handler(req, context);
  if (response.status !== 401) return response;
  const wait = rateLimitedSignInWait(await answeredError(response));
  if (wait === null) return response;
  const headers = new Headers(response.headers);
  headers.set("retry-after", String(wait));
  return new Response(response.body, { status: ERROR_FACES.RATE_LIMITED.http, headers });
}

export { handle as GET, handle as POST };
