import type { z } from "zod";

/**
 * The one error type actions throw. Codes are stable API: clients branch on
 * them, so add new ones rather than changing what an existing one means.
 */
export const ERROR_CODES = [
  "VALIDATION_FAILED",
  "UNAUTHENTICATED",
  "PERMISSION_DENIED",
  "NOT_FOUND",
  "PATH_TAKEN",
  "BRANCH_EXISTS",
  "BRANCH_MOVED",
  "DEFAULT_BRANCH_PROTECTED",
  "DOCUMENT_DELETED",
  "TAG_EXISTS",
  "CONTENT_HASH_MISMATCH",
  "DUPLICATE_HEADING",
  "COMMENT_TAGS_REMOVED",
  "MERGE_REQUEST_EXISTS",
  "MERGE_REQUEST_NOT_OPEN",
  "NOTHING_TO_MERGE",
  "UNRESOLVED_CONFLICTS",
  "COMMIT_MESSAGE_TOO_LONG",
  "ALREADY_INITIALIZED",
  "EMAIL_TAKEN",
  "SIGNATURE_INVALID",
  "LINK_EXPIRED",
  "UPLOAD_ALREADY_USED",
  "PAYLOAD_TOO_LARGE",
  "UNSUPPORTED_MEDIA_TYPE",
  "LAST_OWNER",
  "ALREADY_MEMBER",
  "INVITE_EXPIRED",
  "INVITE_REVOKED",
  "INVITE_USED",
  "INVITE_EMAIL_MISMATCH",
  "CSRF_REJECTED",
  "RATE_LIMITED",
  "INTERNAL",
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export interface ErrorPayload {
  code: ErrorCode;
  message: string;
  details?: Record<string, unknown>;
}

export class DomainError extends Error {
  override readonly name = "DomainError";
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
  }

  toPayload(): ErrorPayload {
    return this.details === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, details: this.details };
  }
}

/** Duck-typed so errors keep their meaning across separately bundled copies of this module. */
export function isDomainError(error: unknown): error is DomainError {
  return (
    error instanceof Error &&
    error.name === "DomainError" &&
    typeof (error as { code?: unknown }).code === "string" &&
    typeof (error as { toPayload?: unknown }).toPayload === "function"
  );
}

/** An object that does not exist or that the caller may not see: the two read the same. */
export function notFound(kind: string, id: string, hint?: string): DomainError {
  const next = hint ?? "Check the id (list or search to find valid ones).";
  return new DomainError("NOT_FOUND", `${kind} ${JSON.stringify(id)} was not found. ${next}`, { kind, id });
}

/**
 * Too many failed attempts (sign-in, API tokens, share links) from one client
 * address or for one account: refused before any check is made.
 */
export function rateLimited(retryAfterMs: number): DomainError {
  const retryAfterSeconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new DomainError("RATE_LIMITED", tooManyAttemptsMessage(retryAfterSeconds), { retryAfterSeconds });
}

/** "Too many attempts; try again in N minutes." */
export function tooManyAttemptsMessage(retryAfterSeconds: number): string {
  const minutes = Math.max(1, Math.ceil(retryAfterSeconds / 60));
  return `Too many attempts; try again in ${minutes} ${minutes === 1 ? "minute" : "minutes"}.`;
}

/** The Retry-After seconds of a RATE_LIMITED error. */
export function retryAfterSeconds(error: DomainError): number {
  const seconds = error.details?.retryAfterSeconds;
  return typeof seconds === "number" && seconds > 0 ? seconds : 60;
}

/** Turns zod issues into the VALIDATION_FAILED error both faces return. */
export function validationError(error: z.ZodError): DomainError {
  const issues = error.issues.map((issue) => ({
    path: issue.path.map(String).join("."),
    message: issue.message,
  }));
  const summary = issues
    .slice(0, 5)
    .map((i) => (i.path ? `${i.path}: ${i.message}` : i.message))
    .join("; ");
  return new DomainError("VALIDATION_FAILED", `Invalid parameters: ${summary}${issues.length > 5 ? "; …" : ""}`, {
    issues,
  });
}
