/** Input fields the actions of the `documents` tool share, described once for agents. */
import { z } from "zod";
import { branchNameSchema, commitMessageSchema, SHORT_COMMIT_ID } from "@/server/core/names";
import { uuidSchema } from "./tool";

export const documentIdField = uuidSchema.describe("The document.");
/** Said wherever an agent names a branch to write on: a protected default branch takes no direct writes. */
export const PROTECTED_DEFAULT_BRANCH_RULE =
  "A document with requiredApprovals above 0 protects its default branch: no direct write reaches it (DEFAULT_BRANCH_PROTECTED, nothing written), so write on another branch and open a merge request.";

export const writeBranchField = branchNameSchema.describe(
  `The branch to write on (writes commit to this branch). ${PROTECTED_DEFAULT_BRANCH_RULE}`,
);
export const commitMessageField = commitMessageSchema.optional();

/**
 * A commit: its full id, or (as git takes them) a unique prefix of at least 7 hex digits, resolved by the store
 * (`resolveCommitRef`): a prefix naming no commit is NOT_FOUND, one naming several AMBIGUOUS_COMMIT_ID.
 */
export const commitRefSchema = z.union([
  uuidSchema,
  z.string().regex(SHORT_COMMIT_ID, "must be a commit id or a prefix of it of at least 7 hex digits"),
]);
