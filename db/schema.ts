/**
 * Quire's tables. Versioned state (blobs, trees, commits, branches) is immutable
 * except for branch heads; everything else is ordinary relational data.
 */
import { sql } from "drizzle-orm";
import {
  bigserial,
  bigint,
  boolean,
  customType,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";
import { agentColumn } from "./schema-agents";

const createdAt = () => timestamp("created_at", { withTimezone: true, mode: "date" }).notNull().defaultNow();

export const workspaces = pgTable("workspaces", {
  id: uuid("id").primaryKey().defaultRandom(),
  name: text("name").notNull(),
  createdAt: createdAt(),
});

export const users = pgTable("users", {
  id: uuid("id").primaryKey().defaultRandom(),
  /** Stored lower-cased; unique across the instance. */
  email: text("email").notNull().unique(),
  name: text("name").notNull(),
  passwordHash: text("password_hash").notNull(),
  createdAt: createdAt(),
});

export const memberships = pgTable(
  "memberships",
  {
    workspaceId: uuid("workspace_id")
      .notNull()
      .references(() => workspaces.id),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id),
    role: text("role", { enum: ["owner", "admin", "member", "guest"] }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.userId] }), index("memberships_user_idx").on(t.userId)],
);

export const apiTokens = pgTable("api_tokens", {
  id: uuid("id").primaryKey().defaultRandom(),
  userId: uuid("user_id")
    .notNull()
    .references(() => users.id),
  label: text("label"),
  /** sha256 of the token; the token itself is shown once and never stored. */
  tokenHash: text("token_hash").notNull().unique(),
  createdAt: createdAt(),
  lastUsedAt: timestamp("last_used_at", { withTimezone: true, mode: "date" }),
  expiresAt: timestamp("expires_at", { withTimezone: true, mode: "date" }),
  revokedAt: timestamp("revoked_at", { withTimezone: true, mode: "date" }),
});

/**
 * A document's identity. path/name/description/deleted mirror the tree at the
 * head of the default branch (kept in step in the transaction that moves that
 * head) so listing and path uniqueness need no tree reads.
 */
export const documents = pgTable(
  "documents",
  {
    id: uuid("id").primaryKey(),
    workspaceId: uuid("workspace_id")
      .notNull()
      .references(() => workspaces.id),
    defaultBranch: text("default_branch").notNull().default("main"),
    path: text("path").notNull(),
    name: text("name").notNull(),
    description: text("description"),
    deleted: boolean("deleted").notNull().default(false),
    /** What workspace members may do without a grant of their own (edit | read | none). */
    defaultPermission: text("default_permission", { enum: ["edit", "read", "none"] })
      .notNull()
      .default("edit"),
    /** The most an AI (any MCP call) may do on this document, before section overrides. */
    aiAccess: text("ai_access", { enum: ["edit", "read", "none"] })
      .notNull()
      .default("edit"),
    createdBy: uuid("created_by")
      .notNull()
      .references(() => users.id),
    /** Approvals (not stale, not the author's) a merge request into the default branch needs before it may be executed; 0 = no rule. */
    requiredApprovals: integer("required_approvals").notNull().default(0),
    createdAt: createdAt(),
    updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  },
  (t) => [uniqueIndex("documents_live_path_uq").on(t.workspaceId, t.path).where(sql`${t.deleted} = false`)],
);

/** Content-addressed section versions: hash of the canonical encoding of the body. */
export const blobs = pgTable("blobs", {
  hash: text("hash").primaryKey(),
  body: jsonb("body").notNull(),
});

/** Content-addressed document snapshots: document state plus ordered (sectionId, blobHash). */
export const trees = pgTable("trees", {
  hash: text("hash").primaryKey(),
  body: jsonb("body").notNull(),
});

export const commits = pgTable(
  "commits",
  {
    id: uuid("id").primaryKey(),
    documentId: uuid("document_id")
      .notNull()
      .references(() => documents.id),
    parentIds: uuid("parent_ids").array().notNull(),
    /** 1 + max(parent generation): lets history walks stop at the fork point. */
    generation: integer("generation").notNull(),
    treeHash: text("tree_hash")
      .notNull()
      .references(() => trees.hash),
    message: text("message").notNull(),
    authorId: uuid("author_id")
      .notNull()
      .references(() => users.id),
    kind: text("kind", { enum: ["create", "write", "merge", "revert"] }).notNull(),
    /** Sections whose content this commit changed relative to its first parent (lets `log` hide what a reader may not see). */
    sectionIds: uuid("section_ids").array().notNull().default(sql`'{}'::uuid[]`),
    /** The agent that made the commit for its author (schema-agents.ts); null for the author themselves. */
    agent: agentColumn(),
    createdAt: createdAt(),
  },
  (t) => [index("commits_document_idx").on(t.documentId, t.generation)],
);

export const branches = pgTable(
  "branches",
  {
    documentId: uuid("document_id")
      .notNull()
      .references(() => documents.id),
    name: text("name").notNull(),
    headCommitId: uuid("head_commit_id")
      .notNull()
      .references(() => commits.id),
    createdBy: uuid("created_by")
      .notNull()
      .references(() => users.id),
    createdAt: createdAt(),
    updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.documentId, t.name] })],
);

/** Per-user document permissions that raise or lower the document's team default. */
export const documentGrants = pgTable(
  "document_grants",
  {
    documentId: uuid("document_id")
      .notNull()
      .references(() => documents.id),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id),
    permission: text("permission", { enum: ["edit", "read", "none"] }).notNull(),
    grantedBy: uuid("granted_by")
      .notNull()
      .references(() => users.id),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.documentId, t.userId] }), index("document_grants_user_idx").on(t.userId)],
);

/** Links that grant access to one document; the token is stored only as a hash. */
export const shareLinks = pgTable("share_links", {
  id: uuid("id").primaryKey().defaultRandom(),
  workspaceId: uuid("workspace_id")
    .notNull()
    .references(() => workspaces.id),
  documentId: uuid("document_id")
    .notNull()
    .references(() => documents.id),
  tokenHash: text("token_hash").notNull().unique(),
  permission: text("permission", { enum: ["edit", "read"] }).notNull(),
  createdBy: uuid("created_by")
    .notNull()
    .references(() => users.id),
  createdAt: createdAt(),
  expiresAt: timestamp("expires_at", { withTimezone: true, mode: "date" }),
  revokedAt: timestamp("revoked_at", { withTimezone: true, mode: "date" }),
});

/** Invitations to join the workspace; the token is stored only as a hash. */
export const invites = pgTable("invites", {
  id: uuid("id").primaryKey().defaultRandom(),
  workspaceId: uuid("workspace_id")
    .notNull()
    .references(() => workspaces.id),
  tokenHash: text("token_hash").notNull().unique(),
  role: text("role", { enum: ["admin", "member", "guest"] }).notNull(),
  /** When set, only this email may accept. */
  email: text("email"),
  createdBy: uuid("created_by")
    .notNull()
    .references(() => users.id),
  createdAt: createdAt(),
  expiresAt: timestamp("expires_at", { withTimezone: true, mode: "date" }),
  acceptedAt: timestamp("accepted_at", { withTimezone: true, mode: "date" }),
  acceptedBy: uuid("accepted_by").references(() => users.id),
  revokedAt: timestamp("revoked_at", { withTimezone: true, mode: "date" }),
});

export const tags = pgTable(
  "tags",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    workspaceId: uuid("workspace_id")
      .notNull()
      .references(() => workspaces.id),
    path: text("path").notNull(),
    displayName: text("display_name"),
    description: text("description"),
    color: text("color"),
    createdBy: uuid("created_by")
      .notNull()
      .references(() => users.id),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex("tags_workspace_path_uq").on(t.workspaceId, t.path)],
);

export const mergeRequests = pgTable(
  "merge_requests",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    workspaceId: uuid("workspace_id")
      .notNull()
      .references(() => workspaces.id),
    documentId: uuid("document_id")
      .notNull()
      .references(() => documents.id),
    sourceBranch: text("source_branch").notNull(),
    targetBranch: text("target_branch").notNull(),
    title: text("title").notNull(),
    description: text("description"),
    status: text("status", { enum: ["open", "merged", "closed"] })
      .notNull()
      .default("open"),
    authorId: uuid("author_id")
      .notNull()
      .references(() => users.id),
    /** The agent that opened the request for its author; null for the author themselves. */
    agent: agentColumn(),
    createdAt: createdAt(),
    updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
    mergedAt: timestamp("merged_at", { withTimezone: true, mode: "date" }),
    mergedBy: uuid("merged_by").references(() => users.id),
    mergeCommitId: uuid("merge_commit_id").references(() => commits.id),
    /**
     * The target branch's head the merge was made onto (a merge commit's first parent; where a fast-forward started),
     * so a merged request's changes are that commit against the merge result. Null while open, and for requests merged
     * before it was recorded (migration 0016).
     */
    mergedOntoCommitId: uuid("merged_onto_commit_id").references(() => commits.id),
    closedAt: timestamp("closed_at", { withTimezone: true, mode: "date" }),
    closedBy: uuid("closed_by").references(() => users.id),
  },
  (t) => [
    index("merge_requests_workspace_idx").on(t.workspaceId, t.createdAt),
    index("merge_requests_document_idx").on(t.documentId, t.status),
  ],
);

export const mergeRequestReviewers = pgTable(
  "merge_request_reviewers",
  {
    mergeRequestId: uuid("merge_request_id")
      .notNull()
      .references(() => mergeRequests.id),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id),
    state: text("state", { enum: ["pending", "approved", "changes_requested"] })
      .notNull()
      .default("pending"),
    addedAt: createdAt(),
    /** When the reviewer last approved, requested changes or reset. */
    reviewedAt: timestamp("reviewed_at", { withTimezone: true, mode: "date" }),
    /** The heads an approval was given on (null unless state is approved). */
    approvedSourceHead: uuid("approved_source_head"),
    approvedTargetHead: uuid("approved_target_head"),
    /** The sections the approver saw, with their blob hash on each side then; the approval is stale once one of them changes. */
    approvedSections: jsonb("approved_sections").$type<ApprovedSection[]>(),
    /**
     * Who gave the verdict: a person (signed in) or an agent (an API token). Only a person's approval counts; null
     * while pending, and for a review given before this was recorded (which therefore counts for nothing).
     */
    reviewedAs: text("reviewed_as", { enum: ["person", "agent"] }),
    /** Which agent gave the verdict when `reviewedAs` is agent. */
    agent: agentColumn(),
  },
  (t) => [primaryKey({ columns: [t.mergeRequestId, t.userId] })],
);

/**
 * Comments anchored in section text by <svc:comment id="…"> markup. The markup
 * is versioned with the section; the comment itself (author, body, mentions)
 * lives here, once.
 */
export const comments = pgTable(
  "comments",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    workspaceId: uuid("workspace_id")
      .notNull()
      .references(() => workspaces.id),
    documentId: uuid("document_id")
      .notNull()
      .references(() => documents.id),
    sectionId: uuid("section_id").notNull(),
    /** The branch the comment was written on. */
    branchName: text("branch_name").notNull(),
    authorId: uuid("author_id")
      .notNull()
      .references(() => users.id),
    body: text("body").notNull(),
    mentions: uuid("mentions").array().notNull(),
    /** The agent that wrote the comment for its author; null for the author themselves. */
    agent: agentColumn(),
    createdAt: createdAt(),
    /**
     * Set while the thread is resolved (null when open or reopened). Like the
     * body and the replies, not versioned with the section: one state on
     * every branch where the comment is anchored.
     */
    resolvedAt: timestamp("resolved_at", { withTimezone: true, mode: "date" }),
    resolvedBy: uuid("resolved_by").references(() => users.id),
  },
  (t) => [index("comments_document_idx").on(t.documentId, t.sectionId)],
);

/** Replies to a comment, oldest first; the thread is the comment and its replies. Not versioned, like the comment. */
export const commentReplies = pgTable(
  "comment_replies",
  {
    id: uuid("id").primaryKey().defaultRandom(),
    commentId: uuid("comment_id")
      .notNull()
      .references(() => comments.id),
    authorId: uuid("author_id")
      .notNull()
      .references(() => users.id),
    body: text("body").notNull(),
    mentions: uuid("mentions").array().notNull(),
    /** The agent that wrote the reply for its author; null for the author themselves. */
    agent: agentColumn(),
    createdAt: createdAt(),
  },
  (t) => [index("comment_replies_comment_idx").on(t.commentId, t.createdAt)],
);

/**
 * Files uploaded for storage blocks. A storage block may name only an upload of
 * its own workspace; the bytes live in the workspace's object storage.
 */
export const uploads = pgTable(
  "uploads",
  {
    key: text("key").primaryKey(),
    workspaceId: uuid("workspace_id")
      .notNull()
      .references(() => workspaces.id),
    filename: text("filename").notNull(),
    mediaType: text("media_type").notNull(),
    byteSize: integer("byte_size"),
    sha256: text("sha256"),
    createdBy: uuid("created_by")
      .notNull()
      .references(() => users.id),
    createdAt: createdAt(),
    /** The signed upload URL stops working at this time. */
    expiresAt: timestamp("expires_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
    /** Set when the bytes have arrived; a storage block may only name a completed upload. */
    completedAt: timestamp("completed_at", { withTimezone: true, mode: "date" }),
  },
  (t) => [index("uploads_workspace_idx").on(t.workspaceId)],
);

/** Instance-wide settings shared by every process on this database (e.g. the session signing secret). */
export const instanceSettings = pgTable("instance_settings", {
  key: text("key").primaryKey(),
  value: text("value").notNull(),
});

/**
 * Counters of failed attempts (sign-in, API tokens, share links) shared by
 * every Quire process on the database, in the shape rate-limiter-flexible's
 * RateLimiterDrizzle reads and writes: `points` used so far in the window that
 * ends at `expire`. Keys are hashed (server/store/rate-limits.ts).
 */
export const rateLimits = pgTable(
  "rate_limits",
  {
    key: text("key").primaryKey(),
    points: integer("points").notNull().default(0),
    expire: timestamp("expire", { withTimezone: true, mode: "date" }),
  },
  (t) => [index("rate_limits_expire_idx").on(t.expire)],
);

const bytea = customType<{ data: Uint8Array; driverData: Uint8Array }>({
  dataType: () => "bytea",
  // postgres.js hands back a Buffer, PGlite a Uint8Array; both are Uint8Arrays.
  fromDriver: (value) => new Uint8Array(value.buffer, value.byteOffset, value.byteLength),
});

/**
 * A branch's draft (live edits not yet committed, server/collab): the head its
 * sections are based on, the log position of its last commit or discard, and
 * who edited it since then (as far as compaction has folded the log).
 */
export const drafts = pgTable(
  "drafts",
  {
    documentId: uuid("document_id")
      .notNull()
      .references(() => documents.id),
    branchName: text("branch_name").notNull(),
    baseCommitId: uuid("base_commit_id")
      .notNull()
      .references(() => commits.id),
    /** Updates with ids up to this one were committed or discarded: their authors are not credited again. */
    settledThrough: bigint("settled_through", { mode: "number" }).notNull().default(0),
    /** Editors since the last commit whose updates compaction has folded away. */
    editorIds: uuid("editor_ids").array().notNull().default(sql`'{}'::uuid[]`),
    updatedAt: timestamp("updated_at", { withTimezone: true, mode: "date" }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.documentId, t.branchName] })],
);

/** One section's live state in a draft: a compacted Yjs update plus the committed version it was based on. */
export const draftSections = pgTable(
  "draft_sections",
  {
    documentId: uuid("document_id").notNull(),
    branchName: text("branch_name").notNull(),
    sectionId: uuid("section_id").notNull(),
    /** The section version (blob) at the draft's base; null when the section is not in the base. */
    baseBlobHash: text("base_blob_hash"),
    state: bytea("state").notNull(),
    /** The last update id folded into `state`. */
    compactedThrough: bigint("compacted_through", { mode: "number" }).notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.documentId, t.branchName, t.sectionId] })],
);

/** The append log of a draft's Yjs updates, written before an update is broadcast; compaction folds it into draft_sections. */
export const draftUpdates = pgTable(
  "draft_updates",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    documentId: uuid("document_id").notNull(),
    branchName: text("branch_name").notNull(),
    sectionId: uuid("section_id").notNull(),
    update: bytea("update").notNull(),
    /** Null for the server's own updates (a committed change applied into the draft). */
    authorId: uuid("author_id"),
    createdAt: createdAt(),
  },
  (t) => [index("draft_updates_section_idx").on(t.documentId, t.branchName, t.sectionId, t.id)],
);

/**
 * The agents (API tokens, OAuth clients: schema-agents.ts) that edited a section of a draft since its last commit or
 * discard, with the person each acted for: a live commit credits them as "<agent> via <person>" (the draft log's
 * author ids name people only). Rows of the sections a commit or discard acted on go with it.
 */
export const draftAgentEditors = pgTable(
  "draft_agent_editors",
  {
    documentId: uuid("document_id").notNull(),
    branchName: text("branch_name").notNull(),
    sectionId: uuid("section_id").notNull(),
    userId: uuid("user_id").notNull(),
    /** `<kind>:<id>` of the agent, so that one agent of one person is one row per section. */
    agentKey: text("agent_key").notNull(),
    agent: agentColumn().notNull(),
  },
  (t) => [primaryKey({ columns: [t.documentId, t.branchName, t.sectionId, t.userId, t.agentKey] })],
);

export type Role = (typeof memberships.$inferSelect)["role"];
export type MergeRequestStatus = (typeof mergeRequests.$inferSelect)["status"];
/** One section an approver saw: its blob hash on the source and on the target (null = absent there) when they approved. */
export interface ApprovedSection {
  sectionId: string;
  source: string | null;
  target: string | null;
}

export type ReviewState = (typeof mergeRequestReviewers.$inferSelect)["state"];
export type ReviewPrincipal = NonNullable<(typeof mergeRequestReviewers.$inferSelect)["reviewedAs"]>;
export type CommitKind = (typeof commits.$inferSelect)["kind"];
export * from "./schema-notifications";
export * from "./schema-search";
export * from "./schema-changesets";
export * from "./schema-agents";
export * from "./schema-oauth";
export * from "./schema-webhooks";
