/**
 * Account operations shared by the CLI and the web sign-in: users, the first
 * owner, credential checks and API tokens. The actor a credential acts as is
 * access's question (`server/access/actor.ts`).
 */
import { randomBytes } from "node:crypto";
import { z } from "zod";
import type { Database } from "@/db/client";
import { DomainError, validationError } from "@/server/core/errors";
import { type CreatedUser, countUsers, createUser, findUserByEmail, getOrInitSetting, insertApiToken } from "@/server/store/accounts";
import { hashPassword, verifyPassword } from "./passwords";
import { hashSecretToken, newSecretToken } from "./secret-tokens";

export const MIN_PASSWORD_LENGTH = 8;

const newUserSchema = z.object({
  email: z.string().trim().toLowerCase().email("must be an email address").max(320),
  name: z.string().trim().min(1, "must not be empty").max(200),
  password: z.string().min(MIN_PASSWORD_LENGTH, `must be at least ${MIN_PASSWORD_LENGTH} characters`).max(1_000),
});

export type NewUser = z.input<typeof newUserSchema>;

/** Adds a user; the first one also creates the default workspace and owns it. */
export async function addUser(db: Database, input: NewUser, now: Date, options: { onlyIfFirst?: boolean } = {}): Promise<CreatedUser> {
  const parsed = newUserSchema.safeParse(input);
  if (!parsed.success) throw validationError(parsed.error);
  const passwordHash = await hashPassword(parsed.data.password);
  return db.transaction((tx) =>
    createUser(tx, { email: parsed.data.email, name: parsed.data.name, passwordHash, now, onlyIfFirst: options.onlyIfFirst }),
  );
}

export const hasUsers = async (db: Database): Promise<boolean> => (await countUsers(db)) > 0;

let dummyPasswordHash: Promise<string> | undefined;

/**
 * A hash of a random password with the same argon2 parameters as real ones,
 * made once per process when first needed: an unknown email is verified
 * against it, so it costs the same time as a known one.
 */
const dummyHash = (): Promise<string> => (dummyPasswordHash ??= hashPassword(randomBytes(32).toString("base64url")));

/**
 * The user if the email/password pair is right, else null. Always does one
 * argon2 verification, for unknown emails and accounts without a password
 * too, so the answer's timing does not tell who has an account.
 */
export async function verifyCredentials(db: Database, email: string, password: string) {
  const user = await findUserByEmail(db, email.trim());
  const storedHash = user?.passwordHash ? user.passwordHash : await dummyHash();
  const matches = await verifyPassword(storedHash, password);
  if (!user?.passwordHash || !matches) return null;
  return { id: user.id, email: user.email, name: user.name };
}

/** What every API token starts with (see `newSecretToken`). */
export const API_TOKEN_PREFIX = "qk_";

export const hashApiToken = hashSecretToken;

export async function issueApiToken(
  db: Database,
  input: { email: string; label?: string; expiresAt?: Date },
  now: Date,
): Promise<{ token: string; tokenId: string; userId: string }> {
  const user = await findUserByEmail(db, input.email);
  if (!user) throw new DomainError("NOT_FOUND", `No user has the email ${JSON.stringify(input.email)}. Add one with \`quire user add\`.`);
  return issueApiTokenForUser(db, { userId: user.id, label: input.label, expiresAt: input.expiresAt }, now);
}

/** Mints a token for a user; the token is returned once and only its hash is stored. */
export async function issueApiTokenForUser(
  db: Database,
  input: { userId: string; label?: string; expiresAt?: Date },
  now: Date,
): Promise<{ token: string; tokenId: string; userId: string }> {
  const token = newSecretToken(API_TOKEN_PREFIX);
  const { id } = await insertApiToken(db, {
    userId: input.userId,
    label: input.label ?? null,
    tokenHash: hashApiToken(token),
    expiresAt: input.expiresAt ?? null,
    now,
  });
  return { token, tokenId: id, userId: input.userId };
}

const AUTH_SECRET_KEY = "auth_secret";

/** The secret that signs browser sessions: from the environment, else generated once and kept in the database. */
export async function ensureAuthSecret(db: Database, fromEnv: string | undefined): Promise<string> {
  return fromEnv ?? getOrInitSetting(db, AUTH_SECRET_KEY, randomBytes(32).toString("base64url"));
}
