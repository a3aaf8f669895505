/** Input fields the actions of the `documents` tool share, described once for agents. */
import { z } from "zod";
import { branchNameSchema, commitMessageSchema, SHORT_COMMIT_ID } from "@/server/core/names";
import { uuidSchema } from "./tool";
import { passedBack } from "@/server/core/schema-listing";

// The name says what it is; the listing adds which actions require it (no "The document." to pay for in every session).
export const documentIdField = uuidSchema;
// That a protected default branch takes no direct writes is said once, in the tool's description (what to do then, in the error).
export const writeBranchField = branchNameSchema.describe("The branch.");
export const commitMessageField = commitMessageSchema.optional();

/**
 * A commit: its full id, or (as git takes them) a unique prefix of at least 7 hex digits, resolved by the store
 * (`resolveCommitRef`): a prefix naming no commit is NOT_FOUND, one naming several AMBIGUOUS_COMMIT_ID.
 */
export const commitRefSchema = passedBack(
  z.union([uuidSchema, z.string().regex(SHORT_COMMIT_ID, "must be a commit id or a prefix of it of at least 7 hex digits")]),
);
