import type { z } from "zod";

/**
 * The tRPC error codes Quire answers with (a subset of tRPC's own names; the
 * router checks they are tRPC's), so this table needs no transport import.
 */
export type TrpcCodeName =
  | "BAD_REQUEST"
  | "UNAUTHORIZED"
  | "FORBIDDEN"
  | "NOT_FOUND"
  | "CONFLICT"
  | "PRECONDITION_FAILED"
  | "PAYLOAD_TOO_LARGE"
  | "UNSUPPORTED_MEDIA_TYPE"
  | "TOO_MANY_REQUESTS"
  | "INTERNAL_SERVER_ERROR"
  | "BAD_GATEWAY";

/**
 * Every error code Quire answers with, and how it travels on each face: the
 * HTTP status (file routes, 413/429 refusals, CSRF) and the tRPC code (whose
 * HTTP status tRPC derives; MCP carries the code in an isError result). The
 * one table every face reads. Codes are stable API: clients branch on them,
 * so add new ones rather than changing what an existing one means.
 */
export const ERROR_FACES = {
  VALIDATION_FAILED: { http: 400, trpc: "BAD_REQUEST" },
  UNAUTHENTICATED: { http: 401, trpc: "UNAUTHORIZED" },
  PERMISSION_DENIED: { http: 403, trpc: "FORBIDDEN" },
  NOT_FOUND: { http: 404, trpc: "NOT_FOUND" },
  AMBIGUOUS_COMMIT_ID: { http: 400, trpc: "BAD_REQUEST" },
  PATH_TAKEN: { http: 409, trpc: "CONFLICT" },
  BRANCH_EXISTS: { http: 409, trpc: "CONFLICT" },
  BRANCH_MOVED: { http: 409, trpc: "CONFLICT" },
  DEFAULT_BRANCH_PROTECTED: { http: 412, trpc: "PRECONDITION_FAILED" },
  DOCUMENT_DELETED: { http: 412, trpc: "PRECONDITION_FAILED" },
  BRANCH_IN_USE: { http: 412, trpc: "PRECONDITION_FAILED" },
  UNCOMMITTED_DRAFT: { http: 412, trpc: "PRECONDITION_FAILED" },
  TAG_EXISTS: { http: 409, trpc: "CONFLICT" },
  CONTENT_HASH_MISMATCH: { http: 409, trpc: "CONFLICT" },
  DUPLICATE_HEADING: { http: 400, trpc: "BAD_REQUEST" },
  COMMENT_TAGS_REMOVED: { http: 400, trpc: "BAD_REQUEST" },
  MERGE_REQUEST_EXISTS: { http: 409, trpc: "CONFLICT" },
  MERGE_REQUEST_NOT_OPEN: { http: 412, trpc: "PRECONDITION_FAILED" },
  CHANGESET_NOT_OPEN: { http: 412, trpc: "PRECONDITION_FAILED" },
  CHANGESET_NOT_MERGEABLE: { http: 409, trpc: "CONFLICT" },
  MERGE_REQUEST_IN_CHANGESET: { http: 412, trpc: "PRECONDITION_FAILED" },
  NOTHING_TO_MERGE: { http: 412, trpc: "PRECONDITION_FAILED" },
  UNRESOLVED_CONFLICTS: { http: 409, trpc: "CONFLICT" },
  APPROVALS_REQUIRED: { http: 412, trpc: "PRECONDITION_FAILED" },
  COMMIT_MESSAGE_TOO_LONG: { http: 400, trpc: "BAD_REQUEST" },
  ALREADY_INITIALIZED: { http: 409, trpc: "CONFLICT" },
  EMAIL_TAKEN: { http: 409, trpc: "CONFLICT" },
  SIGNATURE_INVALID: { http: 403, trpc: "FORBIDDEN" },
  LINK_EXPIRED: { http: 403, trpc: "FORBIDDEN" },
  UPLOAD_ALREADY_USED: { http: 409, trpc: "CONFLICT" },
  PAYLOAD_TOO_LARGE: { http: 413, trpc: "PAYLOAD_TOO_LARGE" },
  UNSUPPORTED_MEDIA_TYPE: { http: 415, trpc: "UNSUPPORTED_MEDIA_TYPE" },
  LAST_OWNER: { http: 412, trpc: "PRECONDITION_FAILED" },
  ALREADY_MEMBER: { http: 409, trpc: "CONFLICT" },
  INVITE_EXPIRED: { http: 412, trpc: "PRECONDITION_FAILED" },
  INVITE_REVOKED: { http: 412, trpc: "PRECONDITION_FAILED" },
  INVITE_USED: { http: 409, trpc: "CONFLICT" },
  INVITE_EMAIL_MISMATCH: { http: 403, trpc: "FORBIDDEN" },
  CSRF_REJECTED: { http: 403, trpc: "FORBIDDEN" },
  RATE_LIMITED: { http: 429, trpc: "TOO_MANY_REQUESTS" },
  /** An outbound URL Quire will not send to (scheme, address): nothing was sent. */
  OUTBOUND_REFUSED: { http: 400, trpc: "BAD_REQUEST" },
  /** An outbound request that failed on the way (no connection, too slow, too large). */
  OUTBOUND_FAILED: { http: 502, trpc: "BAD_GATEWAY" },
  INTERNAL: { http: 500, trpc: "INTERNAL_SERVER_ERROR" },
} as const satisfies Record<string, { http: number; trpc: TrpcCodeName }>;

export type ErrorCode = keyof typeof ERROR_FACES;

export const ERROR_CODES = Object.keys(ERROR_FACES) as ErrorCode[];

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

/** Whether `error` says the object does not exist (or may not be seen). */
export const isNotFound = (error: unknown): boolean => isDomainError(error) && error.code === "NOT_FOUND";

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
