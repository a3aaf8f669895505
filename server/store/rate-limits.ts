/**
 * Counters of attempts (failed ones, or every one for the OAuth endpoints), kept in the database so every Quire process
 * on it counts together (PostgreSQL, or PGlite when embedded). The counting
 * is rate-limiter-flexible's RateLimiterDrizzle on the `rate_limits` table:
 * one atomic upsert per attempt, a fixed window per key that starts with its
 * first counted attempt. This is the only module that builds limiters.
 *
 * Keys are hashed before they are stored, so the table holds no email
 * addresses or client addresses in the clear.
 */
import { lt } from "drizzle-orm";
import { RateLimiterDrizzle, type RateLimiterRes } from "rate-limiter-flexible";
import type { Database } from "@/db/client";
import { rateLimits } from "@/db/schema";
import { sha256Hex } from "@/server/core/hashing";

export interface LimitRule {
  /** Attempts counted within the window before further ones are refused. */
  points: number;
  /** Window length in seconds, from the first counted attempt. */
  durationSeconds: number;
}

const FIFTEEN_MINUTES = 15 * 60;

/** The limits Quire applies (README "Access" documents them). */
export const RATE_LIMITS = {
  /** Sign-in attempts for one email from one client address; a successful sign-in resets it. */
  signInAccount: { points: 10, durationSeconds: FIFTEEN_MINUTES },
  /** Failed sign-ins from one client address, whatever the email. */
  signInAddress: { points: 100, durationSeconds: FIFTEEN_MINUTES },
  /** Invalid API tokens (MCP, tRPC) and refused signed file URLs from one client address. */
  apiCredential: { points: 50, durationSeconds: FIFTEEN_MINUTES },
  /** Unknown, revoked or expired share links opened from one client address. */
  shareLink: { points: 50, durationSeconds: FIFTEEN_MINUTES },
  /** OAuth dynamic client registrations (/oauth/register) from one client address, each attempt counted. */
  oauthRegistration: { points: 30, durationSeconds: FIFTEEN_MINUTES },
  /** OAuth authorization requests (/oauth/authorize, the consent page and its answer) from one client address, each counted. */
  oauthAuthorization: { points: 60, durationSeconds: FIFTEEN_MINUTES },
  /** OAuth token requests (/oauth/token: codes and refreshes) from one client address, each counted. */
  oauthToken: { points: 100, durationSeconds: FIFTEEN_MINUTES },
} as const satisfies Record<string, LimitRule>;

export type LimitName = keyof typeof RATE_LIMITS;

export interface LimitState {
  /** Attempts counted in the current window. */
  count: number;
  /** Whether the limit is used up: the next attempt will be refused. */
  exhausted: boolean;
  /** Milliseconds until the window ends (0 when there is none). */
  msBeforeReset: number;
}

export interface RateLimitStore {
  readonly rules: Record<LimitName, LimitRule>;
  /** Counts one attempt; `allowed` is false once more than `points` were counted in the window. */
  consume(name: LimitName, key: string): Promise<LimitState & { allowed: boolean }>;
  /** The current count without counting. */
  peek(name: LimitName, key: string): Promise<LimitState>;
  /** Takes one counted attempt back (a counted attempt turned out not to be a failure). */
  refund(name: LimitName, key: string): Promise<void>;
  /** Forgets the key's window entirely. */
  reset(name: LimitName, key: string): Promise<void>;
  /** Stops the cleanup timer. */
  close(): void;
}

/** Windows that ended this long ago are deleted by the periodic cleanup. */
const CLEANUP_AFTER_MS = 60 * 60 * 1000;
const CLEANUP_EVERY_MS = 5 * 60 * 1000;

const storedKey = (key: string): string => sha256Hex(key).slice(0, 40);

function stateOf(rule: LimitRule, res: RateLimiterRes | null): LimitState {
  const count = res?.consumedPoints ?? 0;
  return { count, exhausted: count >= rule.points, msBeforeReset: res ? Math.max(res.msBeforeNext, 0) : 0 };
}

export function createRateLimitStore(db: Database, rules: Record<LimitName, LimitRule> = RATE_LIMITS): RateLimitStore {
  const limiters = Object.fromEntries(
    (Object.keys(rules) as LimitName[]).map((name) => [
      name,
      new RateLimiterDrizzle({
        storeClient: db,
        schema: rateLimits,
        keyPrefix: name,
        points: rules[name].points,
        duration: rules[name].durationSeconds,
        // One cleanup for the table, below, that stops when the server closes.
        clearExpiredByTimeout: false,
      }),
    ]),
  ) as Record<LimitName, RateLimiterDrizzle>;

  const cleanup = setInterval(() => {
    db.delete(rateLimits)
      .where(lt(rateLimits.expire, new Date(Date.now() - CLEANUP_AFTER_MS)))
      .catch((error: unknown) => console.warn("[quire] rate limit cleanup failed", error));
  }, CLEANUP_EVERY_MS);
  cleanup.unref();

  return {
    rules,
    async consume(name, key) {
      const rule = rules[name];
      try {
        const res = await limiters[name].consume(storedKey(key));
        return { ...stateOf(rule, res), allowed: true };
      } catch (rejection) {
        // rate-limiter-flexible rejects with a RateLimiterRes when the limit is exceeded, with an Error otherwise.
        if (rejection instanceof Error) throw rejection;
        return { ...stateOf(rule, rejection as RateLimiterRes), allowed: false };
      }
    },
    async peek(name, key) {
      return stateOf(rules[name], await limiters[name].get(storedKey(key)));
    },
    async refund(name, key) {
      await limiters[name].reward(storedKey(key), 1);
    },
    async reset(name, key) {
      await limiters[name].delete(storedKey(key));
    },
    close() {
      clearInterval(cleanup);
    },
  };
}
