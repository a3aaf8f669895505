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
import { asReturnedBy, mergeActionOutputs, named } from "./flatten";
import { notificationsOutput } from "./notifications-output";
import { searchOutput } from "./search-output";

/** A field its name says all about (flatten.ts `named`). */
const str = () => named(z.string());
const strOrNull = () => named(z.string().nullable());
const nextCursor = strOrNull();
const permission = z.enum(PERMISSIONS);
const propertyValue = z.union([z.string(), z.number(), z.boolean()]);
const sideValue = propertyValue.nullable().describe("Its value on that side; null: unset.");

const writeResult = {
  documentId: str(),
  branchName: str(),
  commitId: z.string().describe("Branch head after the write."),
  changed: z.boolean().describe("False: nothing changed, no commit."),
};

const documentSummary = {
  documentId: str(),
  path: str(),
  name: str(),
  description: strOrNull(),
  defaultBranch: str(),
  createdAt: str(),
  updatedAt: str(),
};

/** The agent an action was made by, for its author: the one field every view of history names it with. */
const agentName = z.string().nullable().describe("Agent acting for the author, or null.");

const commitSummary = z.object({
  commitId: str(),
  message: str(),
  authorId: str(),
  authorName: strOrNull(),
  agentName,
  madeBy: z.string().describe('E.g. "Claude via Olivia Owner".'),
  createdAt: str(),
  parentIds: named(z.array(z.string())),
  kind: named(z.enum(["create", "write", "merge", "revert"])),
});

const commentFields = {
  body: str(),
  authorId: str(),
  authorName: strOrNull(),
  agentName,
  mentions: z.array(z.string()).describe("Mentioned user ids."),
  createdAt: str(),
};

const commentView = z.object({
  commentId: z.string().describe("The <svc:comment id>, the thread's id in `comments`."),
  ...commentFields,
  branchName: z.string().describe("Branch written on."),
  status: named(z.enum(["open", "resolved"])),
  resolvedAt: z.string().nullable().describe("When resolved; null while open."),
  resolvedById: strOrNull(),
  resolvedByName: strOrNull(),
  replies: z.array(z.object({ replyId: str(), ...commentFields })).describe("Replies, oldest first."),
});

const sectionView = z.object({
  sectionId: str(),
  name: str(),
  content: shownElsewhere(contentSchema, "Content blocks, as `sections` takes them."),
  contentHash: z.string().describe("For expectedContentHash."),
  position: z.number().describe("0-based, among visible sections."),
  defaultPermission: permission.nullable().describe("Members' permission here; null: the document's."),
  aiAccess: permission.nullable().describe("The most agents may do here; null: the document's."),
  yourPermission: z.enum(["read", "edit"]).describe("Whether `sections` may change it here."),
  references: z
    .array(
      z.object({
        referenceId: str(),
        targetDocumentId: str(),
        targetSectionId: z.string().nullable().describe("null: the whole document."),
        displayTitle: z.string().nullable().describe("Link text; null: the title."),
      }),
    )
    .describe("Links to other documents."),
  comments: shownElsewhere(z.array(commentView), "Its threads, as `comments` list returns them."),
  downloads: z.record(z.string(), z.string()).describe("Storage key -> download URL."),
});

const documentView = {
  documentId: str(),
  path: str(),
  name: str(),
  description: strOrNull(),
  deleted: named(z.boolean()),
  branchName: z.string().nullable().describe("The branch (null: a commit was read)."),
  headCommitId: z.string().describe("Commit shown."),
  tags: z.array(z.object({ tagId: str(), path: str(), displayName: strOrNull(), color: strOrNull() })).describe("Its tags."),
  properties: z.record(z.string(), propertyValue).describe("Column id -> value."),
  sections: z.array(sectionView).describe("Visible sections, in order."),
};

const permissionsView = {
  documentId: str(),
  defaultPermission: permission.describe("Members' permission unless granted otherwise."),
  aiAccess: permission.describe("The most agents may do."),
  grants: z.array(z.object({ userId: str(), name: strOrNull(), permission: named(permission) })).describe("Per-user grants."),
};

const shareLink = {
  shareLinkId: str(),
  documentId: str(),
  permission: z.enum(["read", "edit"]).describe("What the link grants."),
  createdAt: str(),
  expiresAt: z.string().nullable().describe("Expiry, or null: never."),
  revokedAt: z.string().nullable().describe("When revoked; null while it works."),
};

const draftPerson = z.object({ userId: str(), name: str() });

const draftStatus = z.object({
  uncommittedChanges: named(z.boolean()),
  editorIds: z.array(z.string()).describe("Editors since the last commit."),
  connectedUserIds: z.array(z.string()).describe("Users connected live."),
});

const documentsOutput = mergeActionOutputs({
  create: z.object({
    ...documentSummary,
    branchName: str(),
    commitId: z.string().describe("Branch head after the write."),
    sectionIds: z.array(z.string()).describe("The new sections' ids, in order."),
  }),
  list: z.object({ documents: shownElsewhere(z.array(z.object(documentSummary)), "Fields as `get` returns."), nextCursor }),
  get: z.object({
    ...documentSummary,
    headCommitId: str(),
    deleted: named(z.boolean()),
    requiredApprovals: z.number().describe("Approvals a merge into the default branch needs (above 0: protected)."),
    yourPermission: named(permission),
    canManage: z.boolean().describe("You may manage access."),
    draft: draftStatus.describe("The default branch's live draft."),
  }),
  update: z.object(writeResult),
  delete: z.object(writeResult),
  list_deleted: z.object({
    deletedDocuments: z
      .array(
        z.object({
          documentId: str(),
          path: z.string().describe("Its path when it was deleted."),
          name: str(),
          defaultBranch: str(),
          requiredApprovals: z.number().describe("Above 0: protected."),
          deletedAt: z.string().describe("When deleted (or merged after)."),
          deletedBy: z.object({ userId: str(), name: strOrNull() }).describe("Who deleted it."),
          headCommitId: str(),
        }),
      )
      .describe("Newest first."),
    nextCursor,
  }),
  restore: z.object({ ...writeResult, path: str() }),
  delete_branch: z.object({
    documentId: str(),
    branchName: str(),
    headCommitId: str(),
    discardedDraft: z.boolean().describe("Live edits were dropped."),
  }),
  create_branch: z.object({
    documentId: str(),
    branchName: str(),
    sourceBranch: str(),
    headCommitId: str(),
  }),
  list_branches: z.object({
    documentId: str(),
    branches: z
      .array(
        z.object({
          name: str(),
          headCommitId: str(),
          isDefault: named(z.boolean()),
          createdAt: str(),
          updatedAt: str(),
          draft: draftStatus.describe("The branch's live draft."),
        }),
      )
      .describe("Every branch, the default one included."),
  }),
  log: z.object({ commits: z.array(commitSummary).describe("Newest first."), nextCursor }),
  show: z.object({
    ...documentView,
    sections: shownElsewhere(z.array(asReturnedBy("read")), "Sections, as `read` returns them."),
    commit: commitSummary.describe("The commit shown."),
    changes: z
      .array(
        z.object({
          sectionId: str(),
          name: str(),
          status: named(z.enum(["added", "deleted", "modified", "moved"])),
          diff: z.string().describe("Unified diff of its markdown."),
          moved: z.boolean().describe("Also changed place."),
        }),
      )
      .describe("Changes against its first parent."),
  }),
  revert: z.object(writeResult),
  undo: z.object({ ...writeResult, undoneCommitId: str() }),
  create_tag: z.object({
    tagId: str(),
    tagPath: str(),
    tagDisplayName: strOrNull(),
    tagDescription: strOrNull(),
    tagColor: strOrNull(),
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
    message: str(),
    coAuthorIds: z.array(z.string()).describe("Co-authors (other draft editors)."),
  }),
  discard: z.object({
    documentId: str(),
    branchName: str(),
    headCommitId: str(),
    discardedSections: named(z.number()),
  }),
  draft_status: z.object({
    documentId: str(),
    branchName: str(),
    headCommitId: str(),
    uncommittedChanges: named(z.boolean()),
    editors: z.array(draftPerson).describe("Editors since the last commit."),
    connected: z.array(draftPerson).describe("Users connected live."),
    changedSections: z
      .array(z.object({ sectionId: str(), name: z.string().describe("Its name in the draft.") }))
      .describe("Visible sections whose draft differs from the head."),
  }),
});

const readOutput = z.object(documentView);

const sectionsOutput = mergeActionOutputs({
  create: z.object({
    ...writeResult,
    sectionId: str(),
    contentHash: z.string().describe("The section's new content hash."),
    position: z.number().describe("The section's 0-based position."),
  }),
  batch_create: z.object({
    ...writeResult,
    sectionIds: z.array(z.string()).describe("The new sections, in order."),
    contentHashes: z.array(z.string()).describe("Theirs, in that order."),
    positions: z.array(z.number()).describe("Theirs, in that order."),
  }),
  update: z.object({
    ...writeResult,
    sectionId: str(),
    name: z.string().describe("Its name now."),
    contentHash: z.string().describe("The section's new content hash."),
    position: z.number().describe("The section's 0-based position."),
  }),
  delete: z.object({ ...writeResult, sectionId: str() }),
  reorder: z.object({ ...writeResult, sectionOrder: named(z.array(z.string())) }),
  move: z.object({ ...writeResult, sectionId: str() }),
  add_reference: z.object({
    ...writeResult,
    sectionId: str(),
    referenceId: str(),
    contentHash: z.string().describe("The section's new content hash."),
  }),
  remove_reference: z.object({
    ...writeResult,
    sectionId: str(),
    referenceId: str(),
    contentHash: z.string().describe("The section's new content hash."),
  }),
});

const mergeRequestView = z.object({
  mergeRequestId: str(),
  documentId: str(),
  sourceBranch: str(),
  targetBranch: str(),
  title: str(),
  description: strOrNull(),
  status: z.enum(["open", "merged", "closed"]).describe("merged, closed: final."),
  authorId: str(),
  agentName,
  createdAt: str(),
  updatedAt: str(),
  mergedAt: strOrNull(),
  mergedBy: strOrNull(),
  mergeCommitId: strOrNull(),
  mergedOntoCommitId: z.string().nullable().describe("Target head before the merge."),
  closedAt: strOrNull(),
  reviewers: z
    .array(
      z.object({
        userId: str(),
        name: str(),
        email: str(),
        state: named(z.enum(["pending", "approved", "changes_requested"])),
        reviewedAt: strOrNull(),
        stale: z.boolean().describe("A section it saw changed since."),
        approvedSourceHeadCommitId: z.string().nullable().describe("Source head approved on, or null."),
        approvedTargetHeadCommitId: z.string().nullable().describe("Target head approved on, or null."),
        reviewedAs: z.enum(["person", "agent"]).nullable().describe("person or agent (never counts); null while pending."),
        agentName,
      }),
    )
    .describe("Reviewers and reviews."),
  requiredApprovals: named(z.number()),
  approvals: z.number().describe("Fewest approvals covering any section it brings."),
  sectionReviews: z
    .array(
      z.object({
        sectionId: str(),
        name: str(),
        approvedBy: z.array(z.string()).describe("Users whose approval covers it."),
        needsReview: z.boolean().describe("Short of requiredApprovals."),
      }),
    )
    .describe("Review coverage per visible section it brings."),
  hiddenSectionsNeedingReview: named(z.number()),
});

/** What merge_requests analyze returns. */
const mergeAnalysis = z.object({
  mergeRequestId: str(),
  hasConflicts: z.boolean().describe("Needs resolutions."),
  hasTagConflicts: z.boolean().describe("Tags changed on both sides."),
  hasPathCollision: z.boolean().describe("Path taken (resolvedPath)."),
  hasDocumentDeletionConflict: z.boolean().describe("Deleted on one side, changed on the other."),
  propertyConflicts: z
    .array(
      z.object({
        columnId: str(),
        base: sideValue,
        source: sideValue,
        target: sideValue,
      }),
    )
    .describe("Properties changed on both sides."),
  sections: z
    .array(
      z.object({
        sectionId: str(),
        name: str(),
        status: named(z.enum(["added", "deleted", "modified", "conflict", "unchanged"])),
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
  hiddenConflicts: named(z.number()),
  fastForward: named(z.boolean()),
  upToDate: z.boolean().describe("Target has every source commit."),
  sourceHeadCommitId: z.string().describe("For expectedSourceHeadCommitId."),
  targetHeadCommitId: z.string().describe("For expectedTargetHeadCommitId."),
  mergeBaseCommitIds: named(z.array(z.string())),
  generatedCommitMessage: z.string().nullable().describe("execute's default message, or null."),
});

const mergeRequestsOutput = mergeActionOutputs({
  list: z.object({ mergeRequests: shownElsewhere(z.array(mergeRequestView), "Newest first; fields as `get` returns."), nextCursor }),
  get: mergeRequestView,
  create: mergeRequestView,
  analyze: mergeAnalysis,
  execute: z.object({
    mergeRequestId: str(),
    status: named(z.literal("merged")),
    targetBranch: str(),
    mergeCommitId: str(),
    fastForward: named(z.boolean()),
    message: str(),
    warnings: z.array(z.string()).describe("Resolutions not needed."),
  }),
  close: mergeRequestView,
  update: mergeRequestView,
  approve: mergeRequestView,
  request_changes: mergeRequestView,
  reset: mergeRequestView,
  set_required_approvals: z.object({
    documentId: str(),
    requiredApprovals: named(z.number()),
  }),
});

const uploadUrlOutput = z.object({
  uploadUrl: z.string().describe("PUT the bytes here once."),
  key: z.string().describe("Key for a storage block, after the PUT."),
  method: named(z.literal("PUT")),
  headers: z.object({ "content-type": str() }).describe("Headers the PUT must send."),
  expiresAt: str(),
  maxBytes: named(z.number()),
});

const memberList = z.object({
  members: z
    .array(z.object({ userId: str(), name: str(), email: str(), role: named(z.enum(["owner", "admin", "member", "guest"])) }))
    .describe("The members (a page of them for list and search), by name."),
  nextCursor,
});

const membersOutput = mergeActionOutputs({ list: memberList, search: memberList, get: memberList });

const threadView = commentView.extend({
  sectionId: str(),
  sectionName: str(),
  commentedText: z.string().describe("Commented text in the draft."),
  anchored: z.boolean().describe("False if discarded."),
  yourPermission: permission.describe("edit: you may reply, resolve, reopen."),
});

const threadWrite = {
  documentId: str(),
  branchName: str(),
  thread: threadView.describe("The thread as it is now."),
};

const commentsOutput = mergeActionOutputs({
  list: z.object({
    documentId: str(),
    branchName: str(),
    threads: z.array(threadView).describe("In document order."),
  }),
  post: z.object({ ...threadWrite, commentId: z.string().describe("The new thread's id.") }),
  reply: z.object({
    ...threadWrite,
    replyId: str(),
    reopened: z.boolean().describe("The reply reopened it."),
  }),
  resolve: z.object({ ...threadWrite, changed: z.boolean().describe("False if nothing changed.") }),
  reopen: z.object({ ...threadWrite, changed: z.boolean().describe("False if nothing changed.") }),
});

export const outputSchemas = {
  documents: documentsOutput,
  read: readOutput,
  sections: sectionsOutput,
  merge_requests: mergeRequestsOutput,
  upload_url: uploadUrlOutput,
  members: membersOutput,
  comments: commentsOutput,
  notifications: notificationsOutput,
  search: searchOutput,
  changesets: changesetsOutput(),
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
