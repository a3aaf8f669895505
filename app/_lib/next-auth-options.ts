/**
 * next-auth (v4) configuration for the browser: email + password through the
 * Credentials provider, sessions as signed JWT cookies. Accounts live in the
 * Quire server, reached through the in-process bridge.
 *
 * The secret comes from the running server through the bridge (the one the
 * server keeps in the database or was given), never from the environment.
 * The callback URL origin comes from NEXTAUTH_URL / AUTH_TRUST_HOST, which
 * next-auth v4 reads only from the environment: server/config.ts
 * `exportNextEnvironment` sets them once, before Next starts.
 *
 * Cookies are secure (`__Secure-` session cookie with the Secure flag) when
 * the public URL is https; the server reads the same cookie name
 * (server/auth/web-session.ts). A rate-limited sign-in fails with the error
 * `RATE_LIMITED:<seconds>` (server/auth/sign-in-errors.ts), which the auth route answers
 * with 429.
 */
import type { NextAuthOptions } from "next-auth";
import CredentialsProvider from "next-auth/providers/credentials";
import { rateLimitedSignInError } from "@/server/auth/sign-in-errors";
import { getBridge, installedBridge } from "@/server/bridge";
import { isDomainError, retryAfterSeconds } from "@/server/core/errors";

export const authOptions: NextAuthOptions = {
  session: { strategy: "jwt" },
  pages: { signIn: "/signin", error: "/signin" },
  // Read per request (next-auth reads the option each time). No bridge only while `next build` prerenders, which sets no cookies.
  get useSecureCookies() {
    return installedBridge()?.secureCookies ?? false;
  },
  get secret() {
    return installedBridge()?.authSecret;
  },
  // next-auth assigns a fallback from the environment when `secret` is empty; there is none to take.
  set secret(_fromEnvironment: string | undefined) {},
  providers: [
    CredentialsProvider({
      id: "credentials",
      name: "Email and password",
      credentials: {
        email: { label: "Email", type: "email" },
        password: { label: "Password", type: "password" },
      },
      async authorize(credentials) {
        const email = credentials?.email?.trim();
        const password = credentials?.password;
        if (!email || !password) return null;
        try {
          const user = await getBridge().verifyCredentials(email, password);
          return user ? { id: user.id, email: user.email, name: user.name } : null;
        } catch (error) {
          if (isDomainError(error) && error.code === "RATE_LIMITED") throw new Error(rateLimitedSignInError(retryAfterSeconds(error)));
          throw error;
        }
      },
    }),
  ],
  callbacks: {
    jwt({ token, user }) {
      // `user` is present only on sign-in; afterwards the token carries the id.
      if (user) {
        token.sub = user.id;
        token.name = user.name;
        token.email = user.email;
      }
      return token;
    },
    session({ session, token }) {
      if (token.sub) {
        session.user = { ...session.user, id: token.sub };
      }
      return session;
    },
  },
};
