/**
 * What each MCP tool returns, as the `outputSchema` it advertises. McpServer
 * validates every result's structuredContent against it, and so does the SDK
 * client. A tool with several actions has one object: the union of its
 * actions' result fields (mergeActionOutputs).
 *
 * These schemas cannot drift from the code: `OutputSchemasCoverResults` at the
 * end fails to compile when any action's result type (ToolOutput in the
 * registry) has a field the schema lacks, at any depth, or a type it does not
 * allow, and
 * tests/integration/mcp-output-schemas.test.ts calls every action over a real
 * MCP client, which rejects a result its outputSchema does not describe.
 */
import { z } from "zod";
import type { ToolInput, ToolName, ToolOutput } from "@/server/actions/registry";
import { contentSchema } from "@/server/core/blocks";
import { PERMISSIONS } from "@/server/core/document-model";
import { shownElsewhere } from "@/server/core/schema-listing";
import { changesetsOutput } from "./changesets-output";
import { asReturnedBy, mergeActionOutputs } from "./flatten";
import { notificationsOutput } from "./notifications-output";
import { searchOutput } from "./search-output";

const id = (what: string) => z.string().describe(what);
const timestamp = (what: string) => z.string().describe(`${what} (ISO 8601).`);
const nextCursor = z.string().nullable().describe("Pass as `cursor` to get the next page; null on the last page.");
const permission = z.enum(PERMISSIONS);
const propertyValue = z.union([z.string(), z.number(), z.boolean()]);

const writeResult = {
  documentId: id("The document."),
  branchName: z.string().describe("The branch the commit is on."),
  commitId: id("The branch head after the write: the new commit, or the unchanged head when nothing changed."),
  changed: z.boolean().describe("False when the write changed nothing, so no commit was made."),
};

const documentSummary = {
  documentId: id("The document."),
  path: z.string().describe("The document's path, unique among live documents."),
  name: z.string().describe("The document's display name."),
  description: z.string().nullable().describe("Its short description, or null."),
  defaultBranch: z.string().describe("The default branch (usually main)."),
  createdAt: timestamp("When the document was created"),
  updatedAt: timestamp("When the document last changed"),
};

/** The agent an action was made by, for its author: the one field every view of history names it with. */
const agentName = z.string().nullable().describe("The agent (API token or OAuth client) acting for the author; null if none.");

const commitSummary = z.object({
  commitId: z.string(),
  message: z.string(),
  authorId: z.string(),
  authorName: z.string().nullable(),
  agentName,
  madeBy: z.string().describe('As history shows it: "Claude via Olivia Owner", or the author alone.'),
  createdAt: timestamp("When the commit was made"),
  parentIds: z.array(z.string()),
  kind: z.enum(["create", "write", "merge", "revert"]),
});

const commentFields = {
  body: z.string(),
  authorId: z.string(),
  authorName: z.string().nullable(),
  agentName,
  mentions: z.array(z.string()).describe("Mentioned user ids."),
  createdAt: timestamp("When it was written"),
};

const commentView = z.object({
  commentId: z.string().describe('The comment: the id in <svc:comment id="…"> and the thread\'s id for the `comments` tool.'),
  ...commentFields,
  branchName: z.string().describe("The branch the comment was written on."),
  status: z.enum(["open", "resolved"]),
  resolvedAt: z.string().nullable().describe("When the thread was resolved (ISO 8601); null while open."),
  resolvedById: z.string().nullable(),
  resolvedByName: z.string().nullable(),
  replies: z.array(z.object({ replyId: z.string(), ...commentFields })).describe("Replies, oldest first."),
});

const sectionView = z.object({
  sectionId: z.string(),
  name: z.string(),
  content: shownElsewhere(contentSchema, "Content blocks, as `sections` takes them."),
  contentHash: z.string().describe("Pass as `expectedContentHash` to the `sections` tool to detect concurrent edits."),
  position: z.number().describe("0-based index among the sections the caller sees."),
  defaultPermission: permission.nullable(),
  aiAccess: permission.nullable(),
  yourPermission: z
    .enum(["read", "edit"])
    .describe(
      "`edit`: the `sections` tool may change it (at a branch head, the document not deleted there); `read`: read only. Decided by the server (overrides, grants, agent cap).",
    ),
  references: z.array(
    z.object({
      referenceId: z.string(),
      targetDocumentId: z.string(),
      targetSectionId: z.string().nullable(),
      displayTitle: z.string().nullable(),
    }),
  ),
  comments: z.array(commentView).describe("Comments anchored in the section's text by <svc:comment id> markup, with their threads."),
  downloads: z.record(z.string(), z.string()).describe("Storage key -> signed download URL (valid 15 minutes)."),
});

const documentView = {
  documentId: id("The document."),
  path: z.string().describe("The document's path in this state."),
  name: z.string().describe("The document's display name."),
  description: z.string().nullable().describe("Its short description, or null."),
  deleted: z.boolean().describe("True when the document is deleted in this state (deleted on a branch, not yet merged)."),
  branchName: z.string().nullable().describe("The branch read, or null when a commit was read directly."),
  headCommitId: z.string().describe("The commit whose state is shown."),
  tags: z
    .array(z.object({ tagId: z.string(), path: z.string(), displayName: z.string().nullable(), color: z.string().nullable() }))
    .describe("The tags assigned to the document."),
  properties: z.record(z.string(), propertyValue).describe("Scalar properties: column id -> value."),
  sections: z.array(sectionView).describe("The sections the caller may see, in order."),
};

const permissionsView = {
  documentId: id("The document."),
  defaultPermission: permission.describe("What workspace members get unless a grant says otherwise."),
  aiAccess: permission.describe("The most an API token (an agent) may do on the document."),
  grants: z.array(z.object({ userId: z.string(), name: z.string().nullable(), permission })).describe("Per-user grants."),
};

const shareLink = {
  shareLinkId: z.string().describe("The share link."),
  documentId: id("The document."),
  permission: z.enum(["read", "edit"]).describe("What the link grants."),
  createdAt: timestamp("When the link was made"),
  expiresAt: z.string().nullable().describe("When it stops working (ISO 8601); null: never."),
  revokedAt: z.string().nullable().describe("When it was revoked (ISO 8601); null while it works."),
};

const draftPerson = z.object({ userId: z.string().describe("The user."), name: z.string().describe("Their display name.") });

const draftStatus = z.object({
  uncommittedChanges: z.boolean().describe("The draft's text differs from the branch head."),
  editorIds: z.array(z.string()).describe("Who edited the draft since its last commit or discard."),
  connectedUserIds: z.array(z.string()).describe("Users with a live connection to the branch."),
});

const documentsOutput = mergeActionOutputs({
  create: z.object({
    ...documentSummary,
    branchName: z.string().describe("The branch the commit is on."),
    commitId: id("The first commit."),
    sectionIds: z.array(z.string()).describe("The new sections' ids, in order."),
  }),
  list: z.object({ documents: z.array(z.object(documentSummary)).describe("The page of documents."), nextCursor }),
  get: z.object({
    ...documentSummary,
    headCommitId: z.string().describe("The default branch's head."),
    deleted: z.boolean().describe("Deleted on its default branch (`restore` brings it back)."),
    requiredApprovals: z
      .number()
      .describe("Approvals a merge request into the default branch needs; above 0 the default branch is protected (no direct writes)."),
    yourPermission: permission.describe("What the caller may do on the document."),
    canManage: z.boolean().describe("Whether the caller may change its permissions and share links."),
    draft: draftStatus.describe("The default branch's live draft."),
  }),
  update: z.object(writeResult),
  delete: z.object(writeResult),
  list_deleted: z.object({
    deletedDocuments: z
      .array(
        z.object({
          documentId: id("The document."),
          path: z.string().describe("Its path when it was deleted."),
          name: z.string(),
          defaultBranch: z.string(),
          requiredApprovals: z.number().describe("Above 0: its default branch is protected, so restoring goes through a merge request."),
          deletedAt: timestamp("When its default branch last moved: the deletion, unless something was merged after it"),
          deletedBy: z
            .object({ userId: z.string(), name: z.string().nullable() })
            .describe("Who made that commit (for a merged deletion, who merged it)."),
          headCommitId: z.string().describe("The default branch's head."),
        }),
      )
      .describe("Documents deleted on their default branch, newest first."),
    nextCursor,
  }),
  restore: z.object({ ...writeResult, path: z.string().describe("The document's path on that branch.") }),
  delete_branch: z.object({
    documentId: id("The document."),
    branchName: z.string().describe("The deleted branch."),
    headCommitId: z.string().describe("Where it pointed; its commits stay in history."),
    discardedDraft: z.boolean().describe("True when uncommitted live edits were thrown away with it."),
  }),
  create_branch: z.object({
    documentId: id("The document."),
    branchName: z.string().describe("The new branch."),
    sourceBranch: z.string().describe("The branch it started from."),
    headCommitId: z.string().describe("The new branch's head: the source branch's head."),
  }),
  list_branches: z.object({
    documentId: id("The document."),
    branches: z
      .array(
        z.object({
          name: z.string(),
          headCommitId: z.string(),
          isDefault: z.boolean(),
          createdAt: z.string(),
          updatedAt: z.string(),
          draft: draftStatus.describe("The branch's live draft."),
        }),
      )
      .describe("The document's branches."),
  }),
  log: z.object({ commits: z.array(commitSummary).describe("Newest first."), nextCursor }),
  show: z.object({
    ...documentView,
    sections: z
      .array(asReturnedBy("read"))
      .describe("The sections the caller may see at that commit, in order, each as `read` returns it."),
    commit: commitSummary.describe("The commit shown."),
    changes: z
      .array(
        z.object({
          sectionId: z.string(),
          name: z.string().describe("The section's name after the change (before it, for a deleted section)."),
          status: z.enum(["added", "deleted", "modified", "moved"]),
          diff: z.string().describe("Unified diff of the section's markdown; empty for a section that only moved."),
          moved: z.boolean().describe("True when the section also changed place among the sections both states have."),
        }),
      )
      .describe("What the commit changed against its first parent, by section the caller sees."),
  }),
  revert: z.object(writeResult),
  undo: z.object({ ...writeResult, undoneCommitId: z.string().describe("The commit taken back (the head it was given).") }),
  create_tag: z.object({
    tagId: z.string().describe("The new tag."),
    tagPath: z.string().describe("Its hierarchical path."),
    tagDisplayName: z.string().nullable().describe("Its display name, or null (its path is shown)."),
    tagDescription: z.string().nullable().describe("What it means, or null."),
    tagColor: z.string().nullable().describe("Its hex colour, or null."),
  }),
  assign_tag: z.object(writeResult),
  remove_tag: z.object(writeResult),
  set_property: z.object(writeResult),
  get_permissions: z.object(permissionsView),
  set_permissions: z.object(permissionsView),
  create_share_link: z.object({
    ...shareLink,
    path: z.string().describe('The link\'s path, "/share/<token>"; the token is shown only here.'),
  }),
  list_share_links: z.object({ shareLinks: z.array(z.object(shareLink)).describe("The document's share links.") }),
  revoke_share_link: z.object(shareLink),
  commit: z.object({
    ...writeResult,
    message: z.string().describe("The commit's message."),
    coAuthorIds: z.array(z.string()).describe("Everyone credited with `Co-authored-by:` (editors of the draft other than the committer)."),
  }),
  discard: z.object({
    documentId: id("The document."),
    branchName: z.string().describe("The branch whose draft was discarded."),
    headCommitId: z.string().describe("The head the draft now equals."),
    discardedSections: z.number().describe("Sections whose live edits were thrown away."),
  }),
  draft_status: z.object({
    documentId: id("The document."),
    branchName: z.string().describe("The branch whose draft is described."),
    headCommitId: z.string().describe("The branch head the draft is compared with."),
    uncommittedChanges: z.boolean().describe("The draft's text differs from the branch head."),
    editors: z.array(draftPerson).describe("Who edited the draft since its last commit or discard."),
    connected: z.array(draftPerson).describe("Users with a live connection to the branch."),
    changedSections: z
      .array(z.object({ sectionId: z.string().describe("The section."), name: z.string().describe("Its name in the draft.") }))
      .describe("The sections you may see whose draft differs from the head, in the head's order."),
  }),
});

const readOutput = z.object(documentView);

const sectionsOutput = mergeActionOutputs({
  create: z.object({
    ...writeResult,
    sectionId: id("The section."),
    contentHash: z.string().describe("The section's new content hash."),
    position: z.number().describe("The section's 0-based position."),
  }),
  batch_create: z.object({
    ...writeResult,
    sectionIds: z.array(z.string()).describe("The new sections, in the given order."),
    contentHashes: z.array(z.string()).describe("Their content hashes, in the same order."),
    positions: z.array(z.number()).describe("Their 0-based positions, in the same order."),
  }),
  update: z.object({
    ...writeResult,
    sectionId: id("The section."),
    name: z.string().describe("The section's name after the update."),
    contentHash: z.string().describe("The section's new content hash."),
    position: z.number().describe("The section's 0-based position."),
  }),
  delete: z.object({ ...writeResult, sectionId: id("The section.") }),
  reorder: z.object({ ...writeResult, sectionOrder: z.array(z.string()).describe("The section ids in their new order.") }),
  move: z.object({ ...writeResult, sectionId: id("The section moved.") }),
  add_reference: z.object({
    ...writeResult,
    sectionId: id("The section."),
    referenceId: z.string().describe("The reference."),
    contentHash: z.string().describe("The section's new content hash."),
  }),
  remove_reference: z.object({
    ...writeResult,
    sectionId: id("The section."),
    referenceId: z.string().describe("The reference."),
    contentHash: z.string().describe("The section's new content hash."),
  }),
});

const mergeRequestView = z.object({
  mergeRequestId: id("The merge request."),
  documentId: z.string(),
  sourceBranch: z.string().describe("The branch merged from."),
  targetBranch: z.string().describe("The branch merged into."),
  title: z.string().describe("The request's title."),
  description: z.string().nullable().describe("Its description, or null."),
  status: z.enum(["open", "merged", "closed"]).describe("open, merged or closed (the last two are final)."),
  authorId: z.string().describe("Who opened it."),
  agentName,
  createdAt: timestamp("When it was opened"),
  updatedAt: timestamp("When it last changed"),
  mergedAt: z.string().nullable().describe("When it was merged (ISO 8601), or null."),
  mergedBy: z.string().nullable().describe("Who merged it, or null."),
  mergeCommitId: z.string().nullable().describe("The target head its merge made, or null."),
  closedAt: z.string().nullable().describe("When it was closed (ISO 8601), or null."),
  reviewers: z
    .array(
      z.object({
        userId: z.string(),
        name: z.string(),
        email: z.string(),
        state: z.enum(["pending", "approved", "changes_requested"]),
        reviewedAt: z.string().nullable(),
        stale: z
          .boolean()
          .describe("A section this approval saw has changed since on either branch: the approval no longer covers that section."),
        approvedSourceHeadCommitId: z.string().nullable().describe("The source head the approval was given on (null unless approved)."),
        approvedTargetHeadCommitId: z.string().nullable().describe("The target head the approval was given on (null unless approved)."),
        reviewedAs: z
          .enum(["person", "agent"])
          .nullable()
          .describe("A person (signed in) or an agent (API token or OAuth app: shown, never counts). Null while pending."),
        agentName,
      }),
    )
    .describe("The reviewers and their reviews."),
  requiredApprovals: z
    .number()
    .describe("The document's rule (0 = none): approvals from people that every section the request brings needs before execute."),
  approvals: z
    .number()
    .describe(
      "The fewest approvals that count on any section the request brings: a person's approval (not an agent's, not the author's) counts for the sections that person saw, as they are now. Execute needs requiredApprovals.",
    ),
  sectionReviews: z
    .array(
      z.object({
        sectionId: z.string().describe("A section the request brings (a status other than unchanged in the current analysis)."),
        name: z.string().describe("The section's name in the analysis."),
        approvedBy: z
          .array(z.string())
          .describe("User ids of the people whose approval covers this section: they saw it as it is now on both branches."),
        needsReview: z
          .boolean()
          .describe("Fewer approvals cover it than requiredApprovals: execute refuses (APPROVALS_REQUIRED) until someone reviews it."),
      }),
    )
    .describe("Review coverage of each section the request brings that you may see (empty once merged or closed)."),
  hiddenSectionsNeedingReview: z
    .number()
    .describe("Sections the request brings that you may not see and that still need a review from someone who can see them."),
});

/** What merge_requests analyze returns. */
const mergeAnalysis = z.object({
  mergeRequestId: id("The merge request."),
  hasConflicts: z.boolean().describe("Something needs a resolution before execute (any of the conflicts below)."),
  hasTagConflicts: z.boolean().describe("Tags changed differently on both sides (tagResolution)."),
  hasPathCollision: z.boolean().describe("The merged path is taken by another document (resolvedPath)."),
  hasDocumentDeletionConflict: z.boolean().describe("One side deleted the document, the other changed it (documentDeletionResolution)."),
  propertyConflicts: z
    .array(
      z.object({
        columnId: z.string(),
        base: propertyValue.nullable(),
        source: propertyValue.nullable(),
        target: propertyValue.nullable(),
      }),
    )
    .describe("Scalar properties changed differently on both sides; resolve each with scalarPropertyResolutions."),
  sections: z
    .array(
      z.object({
        sectionId: z.string(),
        name: z.string(),
        status: z.enum(["added", "deleted", "modified", "conflict", "unchanged"]),
        sourceDiff: z.string().describe('Unified diff base -> source; "" when the source did not change the section.'),
        targetDiff: z.string().describe('Unified diff base -> target; "" when the target did not change the section.'),
        proposedMerge: z
          .object({
            text: z.string().describe("The merged text, conflicting hunks between <<<<<<< source, ======= and >>>>>>> target lines."),
            conflictingHunks: z.number().describe("Hunks that still carry markers (0: the three-way merge applied cleanly)."),
          })
          .nullable()
          .optional()
          .describe("With proposals: true: a text-only conflict's line-level three-way merge."),
      }),
    )
    .describe("Sections that differ between base, source and target, in merged order."),
  hiddenConflicts: z.number().describe("Conflicting sections the caller may not see."),
  fastForward: z.boolean().describe("The target has no commits of its own."),
  upToDate: z.boolean().describe("The target already contains every source commit."),
  sourceHeadCommitId: z.string().describe("The source head analyzed: pass it to execute as expectedSourceHeadCommitId."),
  targetHeadCommitId: z.string().describe("The target head analyzed: pass it to execute as expectedTargetHeadCommitId."),
  mergeBaseCommitIds: z.array(z.string()).describe("The merge base(s) the diffs start from."),
  generatedCommitMessage: z
    .string()
    .nullable()
    .describe("The message execute writes when given no commitMessage (null for a fast-forward or nothing to merge)."),
});

const mergeRequestsOutput = mergeActionOutputs({
  list: z.object({ mergeRequests: z.array(mergeRequestView).describe("Newest first."), nextCursor }),
  get: mergeRequestView,
  create: mergeRequestView,
  analyze: mergeAnalysis,
  execute: z.object({
    mergeRequestId: id("The merge request."),
    status: z.literal("merged"),
    targetBranch: z.string(),
    mergeCommitId: z.string().describe("The new target head: the merge commit, or the source head after a fast-forward."),
    fastForward: z.boolean().describe("The merge moved the target to the source head."),
    message: z.string().describe("The merge commit's message."),
    warnings: z.array(z.string()).describe("Resolutions given for something not in conflict, and therefore not applied."),
  }),
  close: mergeRequestView,
  update: mergeRequestView,
  approve: mergeRequestView,
  request_changes: mergeRequestView,
  reset: mergeRequestView,
  set_required_approvals: z.object({
    documentId: z.string().describe("The document whose merge rule was set."),
    requiredApprovals: z.number().describe("Approvals every merge request of the document now needs before execute."),
  }),
});

const uploadUrlOutput = z.object({
  uploadUrl: z.string().describe("PUT the file's bytes here, once, before expiresAt."),
  key: z.string().describe("The storage key to put in a `storage` content block once the PUT succeeded."),
  method: z.literal("PUT").describe("The HTTP method of the upload."),
  headers: z.object({ "content-type": z.string() }).describe("Headers the PUT must send."),
  expiresAt: timestamp("When uploadUrl stops working"),
  maxBytes: z.number().describe("The most bytes the PUT may carry."),
});

const memberList = z.object({
  members: z
    .array(z.object({ userId: z.string(), name: z.string(), email: z.string(), role: z.enum(["owner", "admin", "member", "guest"]) }))
    .describe("The page of members, by name."),
  nextCursor,
});

const membersOutput = mergeActionOutputs({ list: memberList, search: memberList });

const threadView = commentView.extend({
  sectionId: z.string(),
  sectionName: z.string(),
  commentedText: z.string().describe("The text the comment is on, in the branch's draft."),
  anchored: z.boolean().describe("False: its draft was discarded before a commit."),
  yourPermission: permission.describe("edit: you may reply, resolve and reopen; read: you may only read the thread."),
});

const threadWrite = {
  documentId: id("The document."),
  branchName: z.string().describe("The branch the comment was found on."),
  thread: threadView.describe("The thread as it is now."),
};

const commentsOutput = mergeActionOutputs({
  list: z.object({
    documentId: id("The document."),
    branchName: z.string().describe("The branch read."),
    threads: z.array(threadView).describe("The threads in sections you may see, in document order (as the branch's draft holds them)."),
  }),
  post: z.object({ ...threadWrite, commentId: id("The new comment (its thread's id).") }),
  reply: z.object({
    ...threadWrite,
    replyId: id("The new reply."),
    reopened: z.boolean().describe("True when the thread was resolved and the reply opened it again."),
  }),
  resolve: z.object({ ...threadWrite, changed: z.boolean().describe("False when the thread already was resolved.") }),
  reopen: z.object({ ...threadWrite, changed: z.boolean().describe("False when the thread already was open.") }),
});

const errorPayload = z
  .object({
    // A string, not the enum of every code: that list would be sent in each tool's schema (tools/list stays small).
    code: z.string().describe("Stable error code, e.g. NOT_FOUND or CONTENT_HASH_MISMATCH."),
    message: z.string().describe("What went wrong and what to do next."),
    details: z.record(z.string(), z.unknown()).optional().describe("Code-specific details, e.g. field-level `issues`."),
  })
  .describe("Present only on isError results, and then alone.");

/** A tool's result object that also admits the error envelope (see the file comment). */
function orErrorEnvelope<T>(result: z.ZodType<T>): z.ZodType<T & { error?: z.output<typeof errorPayload> }> {
  const object = result as unknown as z.ZodObject;
  const { required = [] } = z.toJSONSchema(object, { io: "output", target: "draft-07" }) as { required?: string[] };
  const withError = object.extend({ error: errorPayload.optional() });
  // Fields every result has are required unless the result is an error; with none, there is nothing to say.
  const envelope = required.length === 0 ? withError : withError.meta({ required: [], anyOf: [{ required }, { required: ["error"] }] });
  return envelope as unknown as z.ZodType<T & { error?: z.output<typeof errorPayload> }>;
}

export const outputSchemas = {
  documents: orErrorEnvelope(documentsOutput),
  read: orErrorEnvelope(readOutput),
  sections: orErrorEnvelope(sectionsOutput),
  merge_requests: orErrorEnvelope(mergeRequestsOutput),
  upload_url: orErrorEnvelope(uploadUrlOutput),
  members: orErrorEnvelope(membersOutput),
  comments: orErrorEnvelope(commentsOutput),
  notifications: orErrorEnvelope(notificationsOutput),
  search: orErrorEnvelope(searchOutput),
  changesets: orErrorEnvelope(changesetsOutput()),
} satisfies Record<ToolName, z.ZodType>;

/** The actions of a tool, or `never` for a tool without `action`. */
type ActionOf<T extends ToolName> = ToolInput<T> extends { action: infer A extends string } ? A : never;

/** The result of one action (or of the tool, when it has no actions). */
type ResultOf<T extends ToolName, A> = [A] extends [never] ? ToolOutput<T> : ToolOutput<T, { action: A }>;

/** The same value as JSON carries it: `readonly` (frozen cached values) is no part of what goes over the wire. */
type AsSent<T> = T extends readonly (infer E)[] ? AsSent<E>[] : T extends object ? { -readonly [K in keyof T]: AsSent<T[K]> } : T;

type KeysOfAny<S> = S extends unknown ? keyof S : never;
type ValueOfAny<S, K extends PropertyKey> = S extends unknown ? (K extends keyof S ? S[K] : never) : never;

/**
 * False when the value has a field, at any depth, that the schema does not
 * name (assignability alone lets extra fields through; the outputSchema,
 * closed with additionalProperties false, would refuse them at run time).
 */
type NamesOnlyKnownFields<Value, Schema> = unknown extends Schema
  ? true // a field the schema leaves open (asReturnedBy's objects) takes any value
  : Value extends readonly (infer Item)[]
    ? Schema extends readonly (infer SchemaItem)[]
      ? NamesOnlyKnownFields<Item, SchemaItem>
      : true
    : Value extends object
      ? [Exclude<keyof Value, KeysOfAny<Schema>>] extends [never]
        ? false extends { [K in keyof Value]-?: NamesOnlyKnownFields<Value[K], ValueOfAny<Schema, K>> }[keyof Value]
          ? false
          : true
        : false
      : true;

/** True when the result fits the schema: every field it has, at any depth, is in the schema, with a type the schema allows. */
type Fits<Result, Schema> =
  false extends NamesOnlyKnownFields<AsSent<Result>, Schema> ? false : AsSent<Result> extends Schema ? true : false;

/** Per tool, per action: true, or the name of the action whose result the tool's outputSchema does not describe. */
type Coverage = {
  [T in ToolName]: [ActionOf<T>] extends [never]
    ? Fits<ResultOf<T, never>, z.output<(typeof outputSchemas)[T]>> extends true
      ? true
      : T
    : { [A in ActionOf<T>]: Fits<ResultOf<T, A>, z.output<(typeof outputSchemas)[T]>> extends true ? true : `${T}.${A}` }[ActionOf<T>];
};

type AssertAllTrue<T extends Record<ToolName, true>> = T;

/**
 * Fails to compile (naming the tool and action) when an action's result has
 * drifted from its tool's outputSchema.
 */
export type OutputSchemasCoverResults = AssertAllTrue<Coverage>;
