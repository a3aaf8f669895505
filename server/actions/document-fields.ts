/** Input fields the actions of the `documents` tool share, described once for agents. */
import { branchNameSchema, commitMessageSchema } from "@/server/core/names";
import { uuidSchema } from "./tool";

export const documentIdField = uuidSchema.describe("The document.");
export const writeBranchField = branchNameSchema.describe("The branch to write on (writes commit to this branch).");
export const commitMessageField = commitMessageSchema.optional();
