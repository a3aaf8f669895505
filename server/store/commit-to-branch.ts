/**
 * The one write path of branch heads. Every change to where a branch points
 * (section writes and document updates through group commit, reverts, merges
 * and fast-forwards, a new document's first commit, a new branch, the live
 * layer's draft commits) is one call of commitToBranch, which
 *
 * - stores the new commits with their trees, section versions and comments,
 *   and moves the head by compare-and-swap (or creates the branch), in ONE
 *   statement whose inserts happen only if the head moved: atomic without a
 *   transaction, so group commit's batch costs one round trip;
 * - keeps the document row's mirror of the default branch (path, name,
 *   description, deleted) in step, in the same statement;
 * - after the commit (at once for an autocommit statement, after COMMIT inside
 *   a transaction) remembers the new commits and objects in the caches and
 *   announces the head moves (head-moves.ts).
 *
 * The statement is built from db/schema.ts: the updates and inserts are
 * drizzle builders, and the rows to insert are typed as the tables' rows and
 * read back by json_populate_recordset over the tables' own columns, so a
 * column the schema does not have does not compile. Its text is built once
 * per shape (move or create) and then run with values (db.ts's
 * CompiledStatement): building it per batch cost more CPU than its round trip.
 */
import { randomUUID } from "node:crypto";
import { and, eq, getTableColumns, type SQL, sql } from "drizzle-orm";
import type { PgTable } from "drizzle-orm/pg-core";
import { afterCommit } from "@/db/commit-hooks";
import { type AgentIdentity, blobs, branches, commits, comments, documents, trees } from "@/db/schema";
import {
  changedSectionIds,
  type DocumentTree,
  hashSection,
  hashTree,
  normalizeTree,
  type SectionVersion,
} from "@/server/core/document-model";
import { DomainError } from "@/server/core/errors";
import type { Frozen } from "@/server/core/frozen";
import type { CommentRow, NewCommentRow } from "./comments";
import { type CommitRecord, getCommit, newCommitRecord, rememberCommits } from "./commits";
import { CompiledStatement, type Tx } from "./db";
import { branchMoved, type BranchRow, DEFAULT_BRANCH, type DocumentRow, insertDocumentRow, isPathTaken, pathTaken } from "./documents";
import { announceHeadMoves, type HeadMove, type HeadMoveKind } from "./head-moves";
import { rememberObjects } from "./objects";

/** A commit to store with the move, and the kind of head move it makes. */
export interface NewBranchCommit {
  record: CommitRecord;
  move: Exclude<HeadMoveKind, "fast-forward" | "create-branch">;
}

/** Objects stored with the move (only if the head moves). */
export interface NewObjects {
  sections: ReadonlyMap<string, SectionVersion>;
  trees: ReadonlyMap<string, DocumentTree>;
  /** Comments whose anchors the new section versions carry. */
  comments: readonly NewCommentRow[];
}

export interface BranchCommit {
  document: Pick<DocumentRow, "id" | "defaultBranch">;
  branchName: string;
  /** Where the branch must still point (compare-and-swap), with its tree; null creates the branch, which must not exist yet. */
  from: { commitId: string; tree: DocumentTree } | null;
  /**
   * The new head: new commits, oldest first, each on top of the one before
   * (the first on `from`), stored with the move; or an existing commit the
   * branch is moved to.
   */
  to: { commits: readonly NewBranchCommit[] } | { existing: CommitRecord; move: "fast-forward" | "create-branch" };
  /** The new head's tree; needed with `from`, since the document row mirrors the default branch's path, name, description and deletion. */
  tree?: DocumentTree;
  storing?: NewObjects;
  /** Who moves the branch; a new branch records them as its creator. */
  actorId: string;
  now: Date;
}

const NOTHING: NewObjects = { sections: new Map(), trees: new Map(), comments: [] };

/**
 * Moves (or creates) a branch head as described above. Fails with
 * BRANCH_MOVED when the branch no longer points at `from` (nothing is
 * stored), BRANCH_EXISTS when a branch to create exists, PATH_TAKEN when the
 * default branch's new path is another live document's.
 */
export async function commitToBranch(tx: Tx, input: BranchCommit): Promise<void> {
  const { document, branchName, from, tree, now } = input;
  const storing = input.storing ?? NOTHING;
  const newCommits = "commits" in input.to ? input.to.commits : [];
  const head = "commits" in input.to ? input.to.commits.at(-1)?.record : input.to.existing;
  if (!head) throw new DomainError("INTERNAL", "A head move needs a commit to move to.");
  if (from && !tree) throw new DomainError("INTERNAL", "Moving an existing branch needs the new head's tree.");

  const objectRows = (objects: ReadonlyMap<string, unknown>) => [...objects].map(([hash, body]) => ({ hash, body }));
  const commentRows = storing.comments.map(
    (c): CommentRow => ({
      ...c,
      id: c.id ?? randomUUID(),
      createdAt: c.createdAt ?? now,
      resolvedAt: c.resolvedAt ?? null,
      resolvedBy: c.resolvedBy ?? null,
      agent: c.agent ?? null,
    }),
  );
  const common = {
    documentId: document.id,
    branchName,
    headCommitId: head.id,
    now: now.toISOString(),
    blobs: rowsJson(blobs, objectRows(storing.sections)),
    trees: rowsJson(trees, objectRows(storing.trees)),
    commits: rowsJson(
      commits,
      newCommits.map((c) => c.record),
    ),
    comments: rowsJson(comments, commentRows),
  };

  let rows: Array<{ moved: number }>;
  try {
    rows =
      from && tree
        ? await MOVE_HEAD.rows(tx, {
            ...common,
            fromCommitId: from.commitId,
            // The document row mirrors the default branch's path, name, description and deletion.
            mirror:
              branchName === document.defaultBranch &&
              (from.tree.path !== tree.path ||
                from.tree.name !== tree.name ||
                from.tree.description !== tree.description ||
                from.tree.deleted !== tree.deleted),
            path: tree.path,
            name: tree.name,
            description: tree.description,
            deleted: tree.deleted,
          })
        : await CREATE_BRANCH.rows(tx, { ...common, actorId: input.actorId });
  } catch (error) {
    // Only the mirror can take a path, and it moves only with a tree.
    if (tree && isPathTaken(error)) throw pathTaken(tree.path);
    throw error;
  }
  if (rows[0]?.moved !== 1) {
    if (from) throw branchMoved(branchName);
    throw new DomainError(
      "BRANCH_EXISTS",
      `Branch ${JSON.stringify(branchName)} already exists on this document. Pick another name or write to it.`,
      { branchName },
    );
  }

  afterCommit(tx, () => {
    rememberObjects(storing.sections, storing.trees);
    rememberCommits(newCommits.map((c) => c.record));
    announceHeadMoves(headMoves(input, newCommits, head));
  });
}

/** The moves a commitToBranch call makes: one per new commit, or one to the existing commit. */
function headMoves(input: BranchCommit, newCommits: readonly NewBranchCommit[], head: CommitRecord): HeadMove[] {
  const at = { documentId: input.document.id, branchName: input.branchName };
  let previousCommitId = input.from?.commitId ?? null;
  if (!("commits" in input.to)) return [{ ...at, previousCommitId, commitId: head.id, authorId: head.authorId, kind: input.to.move }];
  return newCommits.map(({ record, move }) => {
    const step = { ...at, previousCommitId, commitId: record.id, authorId: record.authorId, kind: move };
    previousCommitId = record.id;
    return step;
  });
}

/** The values every head move stores: where, to which commit, when, and the new rows as JSON (`rowsJson`). */
type HeadMoveValues = {
  documentId: string;
  branchName: string;
  headCommitId: string;
  /** ISO 8601. */
  now: string;
  blobs: string;
  trees: string;
  commits: string;
  comments: string;
};

/** Moves an existing branch by compare-and-swap on `fromCommitId`, mirroring the default branch into the document row when `mirror`. */
export const MOVE_HEAD = new CompiledStatement<
  HeadMoveValues & {
    fromCommitId: string;
    mirror: boolean;
    path: string;
    name: string;
    description: string | null;
    deleted: boolean;
  }
>((tx, value) => {
  const moved = tx
    .update(branches)
    .set({ headCommitId: value("headCommitId"), updatedAt: value("now") })
    .where(
      and(
        eq(branches.documentId, value("documentId")),
        eq(branches.name, value("branchName")),
        eq(branches.headCommitId, value("fromCommitId")),
      ),
    )
    .returning({ name: branches.name });
  const mirrored = tx
    .update(documents)
    .set({
      path: value("path"),
      name: value("name"),
      description: value("description"),
      deleted: value("deleted"),
      updatedAt: value("now"),
    })
    .where(and(eq(documents.id, value("documentId")), sql`${value("mirror")}::boolean`, sql`exists (select 1 from moved)`));
  return sql`with moved as (${moved.getSQL()}), mirrored as (${mirrored.getSQL()}), ${storedWhenMoved(tx, value)}`;
});

/** Creates a branch at the head commit (stored with it when new); nothing happens if the branch exists. */
export const CREATE_BRANCH = new CompiledStatement<HeadMoveValues & { actorId: string }>((tx, value) => {
  const moved = tx
    .insert(branches)
    .values({
      documentId: value("documentId"),
      name: value("branchName"),
      headCommitId: value("headCommitId"),
      createdBy: value("actorId"),
      createdAt: value("now"),
      updatedAt: value("now"),
    })
    .onConflictDoNothing()
    .returning({ name: branches.name });
  return sql`with moved as (${moved.getSQL()}), ${storedWhenMoved(tx, value)}`;
});

/** The rest of a head move's statement, after its `moved` CTE: the new objects, commits and comments, inserted only if the head moved. */
function storedWhenMoved(tx: Tx, value: (name: keyof HeadMoveValues) => SQL): SQL {
  return sql`
    stored_blobs as (${insertWhenMoved(tx, blobs, value("blobs"), { ignoreExisting: true })}),
    stored_trees as (${insertWhenMoved(tx, trees, value("trees"), { ignoreExisting: true })}),
    stored_commits as (${insertWhenMoved(tx, commits, value("commits"))}),
    stored_comments as (${insertWhenMoved(tx, comments, value("comments"))})
    select (select count(*) from moved)::int as moved`;
}

/**
 * `insert into <table> (<every column>) select <every column> from
 * json_populate_recordset(null::<table>, $rows) where exists (select 1 from
 * moved)`: the rows travel as one JSON parameter (`rowsJson`), keyed by the
 * columns' SQL names, and are inserted only if the head moved.
 */
function insertWhenMoved(tx: Tx, table: PgTable, rowsParameter: SQL, options: { ignoreExisting?: boolean } = {}): SQL {
  const select = sql`select ${sql.join(
    Object.values(getTableColumns(table)).map((column) => sql.identifier(column.name)),
    sql`, `,
  )} from json_populate_recordset(null::${table}, ${rowsParameter}::json) where exists (select 1 from moved)`;
  const insert = tx.insert(table).select(select);
  return (options.ignoreExisting ? insert.onConflictDoNothing() : insert).getSQL();
}

/** Rows typed as the table's rows, as the JSON text insertWhenMoved reads: keyed by column name, dates in ISO 8601. */
function rowsJson<T extends PgTable>(table: T, rows: ReadonlyArray<Frozen<T["$inferSelect"]>>): string {
  const columns = Object.entries(getTableColumns(table));
  return JSON.stringify(
    rows.map((row) => {
      const record: Record<string, unknown> = {};
      for (const [key, column] of columns) {
        const value = (row as Record<string, unknown>)[key];
        record[column.name] = value instanceof Date ? value.toISOString() : value;
      }
      return record;
    }),
  );
}

export interface CreateDocumentInput {
  documentId: string;
  workspaceId: string;
  authorId: string;
  /** The agent acting for the author (recorded on the first commit); null for the author themselves. */
  agent: AgentIdentity | null;
  path: string;
  name: string;
  description: string | null;
  message: string;
  now: Date;
}

/**
 * Creates the document, its first commit and its default branch `main`. The
 * document row exists before `initialSections` runs, so whatever that stores
 * about the sections (comments) can refer to it.
 */
export async function createDocument(
  tx: Tx,
  input: CreateDocumentInput,
  initialSections: (document: DocumentRow) => Promise<Array<{ sectionId: string; version: SectionVersion }>>,
): Promise<{ document: DocumentRow; commit: CommitRecord; tree: DocumentTree }> {
  const document = await insertDocumentRow(tx, {
    id: input.documentId,
    workspaceId: input.workspaceId,
    defaultBranch: DEFAULT_BRANCH,
    path: input.path,
    name: input.name,
    description: input.description,
    createdBy: input.authorId,
    createdAt: input.now,
    updatedAt: input.now,
  });
  const sections = await initialSections(document);
  const tree = normalizeTree({
    path: input.path,
    name: input.name,
    description: input.description,
    deleted: false,
    tagIds: [],
    properties: {},
    sections: sections.map((s) => ({ sectionId: s.sectionId, blobHash: hashSection(s.version) })),
  });
  const commit = newCommitRecord(
    {
      documentId: document.id,
      parentIds: [],
      treeHash: hashTree(tree),
      message: input.message,
      authorId: input.authorId,
      agent: input.agent,
      kind: "create",
      sectionIds: changedSectionIds(null, tree),
      createdAt: input.now,
    },
    [],
  );
  await commitToBranch(tx, {
    document,
    branchName: document.defaultBranch,
    from: null,
    to: { commits: [{ record: commit, move: "create-document" }] },
    tree,
    storing: {
      sections: new Map(sections.map((s) => [hashSection(s.version), s.version])),
      trees: new Map([[commit.treeHash, tree]]),
      comments: [],
    },
    actorId: input.authorId,
    now: input.now,
  });
  return { document, commit, tree };
}

/** A new branch at an existing commit of the document. */
export async function createBranch(
  tx: Tx,
  input: { document: Pick<DocumentRow, "id" | "defaultBranch">; name: string; headCommitId: string; authorId: string; now: Date },
): Promise<BranchRow> {
  await commitToBranch(tx, {
    document: input.document,
    branchName: input.name,
    from: null,
    to: { existing: await getCommit(tx, input.document.id, input.headCommitId), move: "create-branch" },
    actorId: input.authorId,
    now: input.now,
  });
  return {
    documentId: input.document.id,
    name: input.name,
    headCommitId: input.headCommitId,
    createdBy: input.authorId,
    createdAt: input.now,
    updatedAt: input.now,
  };
}
