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
/** A time, as an ISO 8601 string (a value says its own format; the description does not repeat it). */
const timestamp = (what: string) => z.string().describe(what);
const nextCursor = z.string().nullable().describe("`cursor` for the next page; null at the end.");
const permission = z.enum(PERMISSIONS);
const propertyValue = z.union([z.string(), z.number(), z.boolean()]);

const writeResult = {
  documentId: id("The document."),
  branchName: z.string().describe("The branch."),
  commitId: id("Branch head after the write."),
  changed: z.boolean().describe("False: nothing changed, no commit."),
};

const documentSummary = {
  documentId: id("The document."),
  path: z.string().describe("Path."),
  name: z.string().describe("Display name."),
  description: z.string().nullable().describe("Or null."),
  defaultBranch: z.string().describe("Default branch."),
  createdAt: timestamp("Created."),
  updatedAt: timestamp("Last change."),
};

/** The agent an action was made by, for its author: the one field every view of history names it with. */
const agentName = z.string().nullable().describe("Agent acting for the author, or null.");

const commitSummary = z.object({
  commitId: z.string(),
  message: z.string(),
  authorId: z.string(),
  authorName: z.string().nullable(),
  agentName,
  madeBy: z.string().describe('E.g. "Claude via Olivia Owner".'),
  createdAt: timestamp("When made."),
  parentIds: z.array(z.string()),
  kind: z.enum(["create", "write", "merge", "revert"]),
});

const commentFields = {
  body: z.string(),
  authorId: z.string(),
  authorName: z.string().nullable(),
  agentName,
  mentions: z.array(z.string()).describe("Mentioned user ids."),
  createdAt: timestamp("When written."),
};

const commentView = z.object({
  commentId: z.string().describe("The <svc:comment id>, the thread's id in `comments`."),
  ...commentFields,
  branchName: z.string().describe("Branch written on."),
  status: z.enum(["open", "resolved"]),
  resolvedAt: z.string().nullable().describe("When resolved; null while open."),
  resolvedById: z.string().nullable(),
  resolvedByName: z.string().nullable(),
  replies: z.array(z.object({ replyId: z.string(), ...commentFields })).describe("Replies, oldest first."),
});

const sectionView = z.object({
  sectionId: z.string(),
  name: z.string(),
  content: shownElsewhere(contentSchema, "Content blocks, as `sections` takes them."),
  contentHash: z.string().describe("For expectedContentHash."),
  position: z.number().describe("0-based, among visible sections."),
  defaultPermission: permission.nullable(),
  aiAccess: permission.nullable(),
  yourPermission: z.enum(["read", "edit"]).describe("Whether `sections` may change it here."),
  references: z.array(
    z.object({
      referenceId: z.string(),
      targetDocumentId: z.string(),
      targetSectionId: z.string().nullable(),
      displayTitle: z.string().nullable(),
    }),
  ),
  comments: shownElsewhere(z.array(commentView), "Its threads, as `comments` list returns them."),
  downloads: z.record(z.string(), z.string()).describe("Storage key -> download URL."),
});

const documentView = {
  documentId: id("The document."),
  path: z.string().describe("Path."),
  name: z.string().describe("Display name."),
  description: z.string().nullable().describe("Or null."),
  deleted: z.boolean().describe("Deleted."),
  branchName: z.string().nullable().describe("The branch (null: a commit was read)."),
  headCommitId: z.string().describe("Commit shown."),
  tags: z
    .array(z.object({ tagId: z.string(), path: z.string(), displayName: z.string().nullable(), color: z.string().nullable() }))
    .describe("Its tags."),
  properties: z.record(z.string(), propertyValue).describe("Column id -> value."),
  sections: z.array(sectionView).describe("Visible sections, in order."),
};

const permissionsView = {
  documentId: id("The document."),
  defaultPermission: permission.describe("Members' permission unless granted otherwise."),
  aiAccess: permission.describe("The most agents may do."),
  grants: z.array(z.object({ userId: z.string(), name: z.string().nullable(), permission })).describe("Per-user grants."),
};

const shareLink = {
  shareLinkId: z.string().describe("The share link."),
  documentId: id("The document."),
  permission: z.enum(["read", "edit"]).describe("What the link grants."),
  createdAt: timestamp("Created."),
  expiresAt: z.string().nullable().describe("Expiry, or null: never."),
  revokedAt: z.string().nullable().describe("When revoked; null while it works."),
};

const draftPerson = z.object({ userId: z.string().describe("The user."), name: z.string().describe("Their display name.") });

const draftStatus = z.object({
  uncommittedChanges: z.boolean().describe("The draft differs from the head."),
  editorIds: z.array(z.string()).describe("Editors since the last commit."),
  connectedUserIds: z.array(z.string()).describe("Users connected live."),
});

const documentsOutput = mergeActionOutputs({
  create: z.object({
    ...documentSummary,
    branchName: z.string().describe("The branch."),
    commitId: id("Branch head after the write."),
    sectionIds: z.array(z.string()).describe("The new sections' ids, in order."),
  }),
  list: z.object({ documents: shownElsewhere(z.array(z.object(documentSummary)), "Fields as `get` returns."), nextCursor }),
  get: z.object({
    ...documentSummary,
    headCommitId: z.string().describe("Branch head."),
    deleted: z.boolean().describe("Deleted."),
    requiredApprovals: z.number().describe("Approvals a merge into the default branch needs (above 0: protected)."),
    yourPermission: permission.describe("Your permission."),
    canManage: z.boolean().describe("You may manage access."),
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
          requiredApprovals: z.number().describe("Above 0: protected."),
          deletedAt: timestamp("When deleted (or merged after)."),
          deletedBy: z.object({ userId: z.string(), name: z.string().nullable() }).describe("Who deleted it."),
          headCommitId: z.string().describe("Branch head."),
        }),
      )
      .describe("Newest first."),
    nextCursor,
  }),
  restore: z.object({ ...writeResult, path: z.string().describe("Path.") }),
  delete_branch: z.object({
    documentId: id("The document."),
    branchName: z.string().describe("The branch."),
    headCommitId: z.string().describe("Branch head."),
    discardedDraft: z.boolean().describe("Live edits were dropped."),
  }),
  create_branch: z.object({
    documentId: id("The document."),
    branchName: z.string().describe("The branch."),
    sourceBranch: z.string().describe("The branch it started from."),
    headCommitId: z.string().describe("Branch head."),
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
    sections: z.array(asReturnedBy("read")).describe("Sections, as `read` returns them."),
    commit: commitSummary.describe("The commit shown."),
    changes: z
      .array(
        z.object({
          sectionId: z.string(),
          name: z.string().describe("Its name."),
          status: z.enum(["added", "deleted", "modified", "moved"]),
          diff: z.string().describe("Unified diff of its markdown."),
          moved: z.boolean().describe("Also changed place."),
        }),
      )
      .describe("Changes against its first parent."),
  }),
  revert: z.object(writeResult),
  undo: z.object({ ...writeResult, undoneCommitId: z.string().describe("Commit taken back.") }),
  create_tag: z.object({
    tagId: z.string().describe("The new tag."),
    tagPath: z.string().describe("Its hierarchical path."),
    tagDisplayName: z.string().nullable().describe("Display name, or null."),
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
    path: z.string().describe('"/share/<token>" (shown only now).'),
  }),
  list_share_links: z.object({
    shareLinks: shownElsewhere(z.array(z.object(shareLink)), "Fields as `create_share_link` returns them."),
  }),
  revoke_share_link: z.object(shareLink),
  commit: z.object({
    ...writeResult,
    message: z.string().describe("The commit's message."),
    coAuthorIds: z.array(z.string()).describe("Co-authors (other draft editors)."),
  }),
  discard: z.object({
    documentId: id("The document."),
    branchName: z.string().describe("The branch."),
    headCommitId: z.string().describe("Branch head."),
    discardedSections: z.number().describe("Sections discarded."),
  }),
  draft_status: z.object({
    documentId: id("The document."),
    branchName: z.string().describe("The branch."),
    headCommitId: z.string().describe("Branch head."),
    uncommittedChanges: z.boolean().describe("The draft differs from the head."),
    editors: z.array(draftPerson).describe("Editors since the last commit."),
    connected: z.array(draftPerson).describe("Users connected live."),
    changedSections: z
      .array(z.object({ sectionId: z.string().describe("The section."), name: z.string().describe("Its name in the draft.") }))
      .describe("Visible sections whose draft differs from the head."),
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
    sectionIds: z.array(z.string()).describe("The new sections."),
    contentHashes: z.array(z.string()).describe("Their contentHashes."),
    positions: z.array(z.number()).describe("Their positions."),
  }),
  update: z.object({
    ...writeResult,
    sectionId: id("The section."),
    name: z.string().describe("Its name now."),
    contentHash: z.string().describe("The section's new content hash."),
    position: z.number().describe("The section's 0-based position."),
  }),
  delete: z.object({ ...writeResult, sectionId: id("The section.") }),
  reorder: z.object({ ...writeResult, sectionOrder: z.array(z.string()).describe("The new order.") }),
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
  description: z.string().nullable().describe("Or null."),
  status: z.enum(["open", "merged", "closed"]).describe("merged, closed: final."),
  authorId: z.string().describe("Who opened it."),
  agentName,
  createdAt: timestamp("Opened."),
  updatedAt: timestamp("Last change."),
  mergedAt: z.string().nullable().describe("When merged, or null."),
  mergedBy: z.string().nullable().describe("Merged by, or null."),
  mergeCommitId: z.string().nullable().describe("Merge commit, or null."),
  mergedOntoCommitId: z.string().nullable().describe("Target head before the merge."),
  closedAt: z.string().nullable().describe("When closed, or null."),
  reviewers: z
    .array(
      z.object({
        userId: z.string(),
        name: z.string(),
        email: z.string(),
        state: z.enum(["pending", "approved", "changes_requested"]),
        reviewedAt: z.string().nullable(),
        stale: z.boolean().describe("A section it saw changed since."),
        approvedSourceHeadCommitId: z.string().nullable().describe("Source head approved on, or null."),
        approvedTargetHeadCommitId: z.string().nullable().describe("Target head approved on, or null."),
        reviewedAs: z.enum(["person", "agent"]).nullable().describe("person or agent (never counts); null while pending."),
        agentName,
      }),
    )
    .describe("Reviewers and reviews."),
  requiredApprovals: z.number().describe("Approvals each section it brings needs."),
  approvals: z.number().describe("Fewest approvals covering any section it brings."),
  sectionReviews: z
    .array(
      z.object({
        sectionId: z.string().describe("A section it brings."),
        name: z.string().describe("Its name."),
        approvedBy: z.array(z.string()).describe("Users whose approval covers it."),
        needsReview: z.boolean().describe("Short of requiredApprovals."),
      }),
    )
    .describe("Review coverage per visible section it brings."),
  hiddenSectionsNeedingReview: z.number().describe("Hidden sections needing review."),
});

/** What merge_requests analyze returns. */
const mergeAnalysis = z.object({
  mergeRequestId: id("The merge request."),
  hasConflicts: z.boolean().describe("Needs resolutions."),
  hasTagConflicts: z.boolean().describe("Tags changed on both sides."),
  hasPathCollision: z.boolean().describe("Path taken (resolvedPath)."),
  hasDocumentDeletionConflict: z.boolean().describe("Deleted on one side, changed on the other."),
  propertyConflicts: z
    .array(
      z.object({
        columnId: z.string(),
        base: propertyValue.nullable(),
        source: propertyValue.nullable(),
        target: propertyValue.nullable(),
      }),
    )
    .describe("Properties changed on both sides."),
  sections: z
    .array(
      z.object({
        sectionId: z.string(),
        name: z.string(),
        status: z.enum(["added", "deleted", "modified", "conflict", "unchanged"]),
        sourceDiff: z.string().describe("Unified diff base -> source."),
        targetDiff: z.string().describe("Unified diff base -> target, conflicts only."),
        proposedMerge: z
          .object({
            text: z.string().describe("Merged text with <<<<<<< ======= >>>>>>> conflict markers."),
            conflictingHunks: z.number().describe("Hunks with markers (0: clean)."),
          })
          .nullable()
          .optional()
          .describe("With proposals: true, for text-only conflicts: a start for `merged`."),
      }),
    )
    .describe("Sections that differ."),
  hiddenConflicts: z.number().describe("Hidden conflicting sections."),
  fastForward: z.boolean().describe("Fast-forward."),
  upToDate: z.boolean().describe("Target has every source commit."),
  sourceHeadCommitId: z.string().describe("For expectedSourceHeadCommitId."),
  targetHeadCommitId: z.string().describe("For expectedTargetHeadCommitId."),
  mergeBaseCommitIds: z.array(z.string()).describe("Merge base(s)."),
  generatedCommitMessage: z.string().nullable().describe("execute's default message, or null."),
});

const mergeRequestsOutput = mergeActionOutputs({
  list: z.object({ mergeRequests: shownElsewhere(z.array(mergeRequestView), "Newest first; fields as `get` returns."), nextCursor }),
  get: mergeRequestView,
  create: mergeRequestView,
  analyze: mergeAnalysis,
  execute: z.object({
    mergeRequestId: id("The merge request."),
    status: z.literal("merged"),
    targetBranch: z.string(),
    mergeCommitId: z.string().describe("Merge commit, or null."),
    fastForward: z.boolean().describe("Fast-forward."),
    message: z.string().describe("The merge commit's message."),
    warnings: z.array(z.string()).describe("Resolutions not needed."),
  }),
  close: mergeRequestView,
  update: mergeRequestView,
  approve: mergeRequestView,
  request_changes: mergeRequestView,
  reset: mergeRequestView,
  set_required_approvals: z.object({
    documentId: z.string().describe("The document."),
    requiredApprovals: z.number().describe("Approvals each section it brings needs."),
  }),
});

const uploadUrlOutput = z.object({
  uploadUrl: z.string().describe("PUT the bytes here once."),
  key: z.string().describe("Key for a storage block, after the PUT."),
  method: z.literal("PUT").describe("The HTTP method of the upload."),
  headers: z.object({ "content-type": z.string() }).describe("Headers the PUT must send."),
  expiresAt: timestamp("When uploadUrl expires."),
  maxBytes: z.number().describe("Max bytes."),
});

const memberList = z.object({
  members: z
    .array(z.object({ userId: z.string(), name: z.string(), email: z.string(), role: z.enum(["owner", "admin", "member", "guest"]) }))
    .describe("The members (a page of them for list and search), by name."),
  nextCursor,
});

const membersOutput = mergeActionOutputs({ list: memberList, search: memberList, get: memberList });

const threadView = commentView.extend({
  sectionId: z.string(),
  sectionName: z.string(),
  commentedText: z.string().describe("Commented text in the draft."),
  anchored: z.boolean().describe("False if discarded."),
  yourPermission: permission.describe("edit: you may reply, resolve, reopen."),
});

const threadWrite = {
  documentId: id("The document."),
  branchName: z.string().describe("The branch."),
  thread: threadView.describe("The thread as it is now."),
};

const commentsOutput = mergeActionOutputs({
  list: z.object({
    documentId: id("The document."),
    branchName: z.string().describe("The branch read."),
    threads: z.array(threadView).describe("In document order."),
  }),
  post: z.object({ ...threadWrite, commentId: id("The new comment (thread id).") }),
  reply: z.object({
    ...threadWrite,
    replyId: id("The new reply."),
    reopened: z.boolean().describe("The reply reopened it."),
  }),
  resolve: z.object({ ...threadWrite, changed: z.boolean().describe("False if nothing changed.") }),
  reopen: z.object({ ...threadWrite, changed: z.boolean().describe("False if nothing changed.") }),
});

const errorPayload = z
  .object({
    // A string, not the enum of every code: that list would be sent in each tool's schema (tools/list stays small).
    code: z.string().describe("E.g. NOT_FOUND."),
    message: z.string().describe("What to do next."),
    details: z.record(z.string(), z.unknown()).optional().describe("Per code, e.g. `issues`."),
  })
  .describe("Only on isError results.");

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
