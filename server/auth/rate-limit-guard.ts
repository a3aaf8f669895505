/**
 * Where credentials meet the rate limits (server/store/rate-limits.ts):
 * sign-in, API tokens and signed file URLs, and share links. Counting happens
 * in the database, so every Quire process on it sees the same counts.
 *
 * - Sign-in counts every attempt before the password is checked (one atomic
 *   upsert, so a burst of parallel guesses cannot slip past the limit) and
 *   takes it back when the attempt succeeds: a success resets the
 *   account+address counter and refunds the address counter. There is no
 *   limit per account alone: anyone could then lock a person out.
 * - API tokens and share links count only failures. Whether an address is
 *   exhausted is asked before the credential is checked; a process remembers
 *   the answer "not exhausted" for a couple of seconds, so a busy agent's
 *   requests need no extra query. A failure is always counted in the
 *   database, so a guesser is stopped in every process; only a valid
 *   credential may pass for those seconds after another process exhausted
 *   its address.
 * - The OAuth endpoints a client or a browser calls (registration,
 *   authorization, token) count every attempt, whatever its outcome: each
 *   may create rows or fetch a client metadata document, so their volume is
 *   what is bounded, on top of the failure count shared with API tokens.
 */
import type { Database } from "@/db/client";
import { rateLimited } from "@/server/core/errors";
import { createCache } from "@/server/store/caches";
import type { LimitName, RateLimitStore } from "@/server/store/rate-limits";
import { verifyCredentials } from "./accounts";

/** How long a process trusts a "not exhausted" answer for an address. */
const CLEAR_FOR_MS = 2_000;

type FailureLimit = Extract<LimitName, "apiCredential" | "shareLink">;
export type AttemptLimit = Extract<LimitName, "oauthRegistration" | "oauthAuthorization" | "oauthToken">;

export interface RateLimitGuard {
  /** verifyCredentials under the sign-in limits; throws RATE_LIMITED instead of checking once they are used up. */
  signIn(email: string, password: string, address: string): Promise<{ id: string; email: string; name: string } | null>;
  /** Throws RATE_LIMITED when the address has no failures left under `limit`. */
  refuseIfExhausted(limit: FailureLimit, address: string): Promise<void>;
  /** Counts a failure; throws RATE_LIMITED when it went past the limit. */
  countFailure(limit: FailureLimit, address: string): Promise<void>;
  /** Counts an attempt, whatever comes of it; throws RATE_LIMITED once the address has used `limit` up. */
  countAttempt(limit: AttemptLimit, address: string): Promise<void>;
  /** Checks a credential under `limit`: refused when exhausted, a null answer counts as a failure. */
  check<T>(limit: FailureLimit, address: string, verify: () => Promise<T | null>): Promise<T | null>;
}

export function createRateLimitGuard(db: Database, store: RateLimitStore): RateLimitGuard {
  /** Per limit and address: exhausted until, or known not exhausted until (ms since epoch). */
  const known = createCache<string, { exhausted: boolean; until: number }>({
    name: "rate-limit answers by limit and address",
    keptTrueBy:
      "each answer carries its own end: an exhausted address stays exhausted until its window resets, a clear one is trusted for 2 s while every failure is still counted in the database",
    max: 10_000,
  });
  const memoKey = (limit: FailureLimit, address: string) => `${limit} ${address}`;

  async function refuseIfExhausted(limit: FailureLimit, address: string): Promise<void> {
    const key = memoKey(limit, address);
    const now = Date.now();
    const memo = known.get(key);
    if (memo && memo.until > now) {
      if (memo.exhausted) throw rateLimited(memo.until - now);
      return;
    }
    const state = await store.peek(limit, address);
    if (state.exhausted) {
      known.set(key, { exhausted: true, until: now + state.msBeforeReset });
      throw rateLimited(state.msBeforeReset);
    }
    known.set(key, { exhausted: false, until: now + CLEAR_FOR_MS });
  }

  async function countFailure(limit: FailureLimit, address: string): Promise<void> {
    const state = await store.consume(limit, address);
    if (state.exhausted) known.set(memoKey(limit, address), { exhausted: true, until: Date.now() + state.msBeforeReset });
    if (!state.allowed) throw rateLimited(state.msBeforeReset);
  }

  return {
    async signIn(email, password, address) {
      const account = `${email.trim().toLowerCase()}\n${address}`;
      const [byAccount, byAddress] = await Promise.all([store.consume("signInAccount", account), store.consume("signInAddress", address)]);
      if (!byAccount.allowed || !byAddress.allowed) {
        const waits = [byAccount, byAddress].filter((s) => !s.allowed).map((s) => s.msBeforeReset);
        throw rateLimited(Math.max(...waits));
      }
      const user = await verifyCredentials(db, email, password);
      if (user) await Promise.all([store.reset("signInAccount", account), store.refund("signInAddress", address)]);
      return user;
    },
    refuseIfExhausted,
    countFailure,
    async countAttempt(limit, address) {
      const state = await store.consume(limit, address);
      if (!state.allowed) throw rateLimited(state.msBeforeReset);
    },
    async check(limit, address, verify) {
      await refuseIfExhausted(limit, address);
      const result = await verify();
      if (result === null) await countFailure(limit, address);
      return result;
    },
  };
}
