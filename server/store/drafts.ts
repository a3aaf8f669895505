/**
 * Drafts in PostgreSQL: per branch the head its sections are based on; per
 * section the committed version it is based on and a compacted Yjs state;
 * and the append log of updates (a room stores them behind the broadcast,
 * in arrival order). Compaction folds the log into the state. The agents
 * that made updates are kept per section beside the log (its author ids name
 * people only), until a commit or discard settles their sections.
 */
import { and, eq, getTableName, gt, isNotNull, lte, not, sql } from "drizzle-orm";
import type { AnyPgColumn } from "drizzle-orm/pg-core";
import { draftAgentEditors, draftSections, drafts, draftUpdates } from "@/db/schema";
import type { AgentIdentity } from "@/db/schema-agents";
import { anyOf, CompiledStatement, type Tx } from "./db";

export type DraftRow = typeof drafts.$inferSelect;

export interface DraftKey {
  documentId: string;
  branchName: string;
}

export interface SectionKey extends DraftKey {
  sectionId: string;
}

export interface StoredSectionDraft {
  baseBlobHash: string | null;
  state: Uint8Array;
  compactedThrough: number;
  /** Log entries after the compacted state, in order. */
  updates: Array<{ id: number; update: Uint8Array }>;
}

export interface NewDraftUpdate extends SectionKey {
  update: Uint8Array;
  authorId: string | null;
  /** The agent the author made it through (an API token, an OAuth client); absent or null for the person themselves. */
  agent?: AgentIdentity | null;
}

/** An agent that edited the draft, and the person it acted for. */
export interface DraftAgentEditor {
  userId: string;
  agent: AgentIdentity;
}

const draftIs = (key: DraftKey) => and(eq(drafts.documentId, key.documentId), eq(drafts.branchName, key.branchName));
const sectionRowIs = (key: SectionKey) =>
  and(
    eq(draftSections.documentId, key.documentId),
    eq(draftSections.branchName, key.branchName),
    eq(draftSections.sectionId, key.sectionId),
  );
const updatesOfSection = (key: SectionKey) =>
  and(eq(draftUpdates.documentId, key.documentId), eq(draftUpdates.branchName, key.branchName), eq(draftUpdates.sectionId, key.sectionId));
const updatesOfDraft = (key: DraftKey) => and(eq(draftUpdates.documentId, key.documentId), eq(draftUpdates.branchName, key.branchName));

async function findDraft(tx: Tx, key: DraftKey): Promise<DraftRow | undefined> {
  const [row] = await tx.select().from(drafts).where(draftIs(key));
  return row;
}

/** The branch's draft, created on `headCommitId` if it has none (whoever creates it first wins). */
export async function ensureDraft(tx: Tx, key: DraftKey, headCommitId: string): Promise<DraftRow> {
  await tx
    .insert(drafts)
    .values({ ...key, baseCommitId: headCommitId })
    .onConflictDoNothing();
  return (await findDraft(tx, key))!;
}

export async function findSectionDraft(tx: Tx, key: SectionKey): Promise<StoredSectionDraft | undefined> {
  const [row] = await tx.select().from(draftSections).where(sectionRowIs(key));
  if (!row) return undefined;
  const updates = await tx
    .select({ id: draftUpdates.id, update: draftUpdates.update })
    .from(draftUpdates)
    .where(and(updatesOfSection(key), gt(draftUpdates.id, row.compactedThrough)))
    .orderBy(draftUpdates.id);
  return { baseBlobHash: row.baseBlobHash, state: row.state, compactedThrough: row.compactedThrough, updates };
}

/** Several sections' stored drafts of one branch, in two statements whatever their number (those without a draft are left out). */
export async function findSectionDrafts(tx: Tx, key: DraftKey, sectionIds: readonly string[]): Promise<Map<string, StoredSectionDraft>> {
  const found = new Map<string, StoredSectionDraft>();
  if (sectionIds.length === 0) return found;
  const rows = await tx
    .select()
    .from(draftSections)
    .where(
      and(
        eq(draftSections.documentId, key.documentId),
        eq(draftSections.branchName, key.branchName),
        anyOf(draftSections.sectionId, [...sectionIds]),
      ),
    );
  for (const row of rows) {
    found.set(row.sectionId, { baseBlobHash: row.baseBlobHash, state: row.state, compactedThrough: row.compactedThrough, updates: [] });
  }
  const logged = await tx
    .select({ sectionId: draftUpdates.sectionId, id: draftUpdates.id, update: draftUpdates.update })
    .from(draftUpdates)
    .where(and(updatesOfDraft(key), anyOf(draftUpdates.sectionId, [...found.keys()])))
    .orderBy(draftUpdates.id);
  for (const { sectionId, id, update } of logged) {
    const draft = found.get(sectionId)!;
    if (id > draft.compactedThrough) draft.updates.push({ id, update });
  }
  return found;
}

/**
 * Stores a section's first state unless another room (in any process) stored
 * one first; returns what is stored. The first state is never written over:
 * applying initial content to a draft that already has some is how content
 * gets duplicated.
 */
export async function createSectionDraft(
  tx: Tx,
  key: SectionKey,
  first: { baseBlobHash: string | null; state: Uint8Array },
): Promise<StoredSectionDraft> {
  await tx
    .insert(draftSections)
    .values({ ...key, ...first })
    .onConflictDoNothing();
  return (await findSectionDraft(tx, key))!;
}

/** Sections of the draft that have live state. */
export async function listSectionDrafts(tx: Tx, key: DraftKey): Promise<Array<{ sectionId: string; baseBlobHash: string | null }>> {
  return tx
    .select({ sectionId: draftSections.sectionId, baseBlobHash: draftSections.baseBlobHash })
    .from(draftSections)
    .where(and(eq(draftSections.documentId, key.documentId), eq(draftSections.branchName, key.branchName)));
}

/** The values of APPEND_ONE: an update and, for an agent's, its credit. */
type AppendOneValues = {
  documentId: string;
  branchName: string;
  sectionId: string;
  update: Uint8Array;
  authorId: string | null;
  /** `<kind>:<id>` and the agent as JSON text, or null (a person's own update, or one without author). */
  agentKey: string | null;
  agent: string | null;
};

/**
 * One update appended, and its agent credited, in one statement compiled
 * once, with each value its own parameter: the usual batch when keystrokes
 * come slower than a statement takes. The JSON that APPEND reads costs both
 * sides more for one row (at 1,000 clients, CPU per delivered edit 494-519
 * µs through APPEND against 456-465 before it; bench/README.md "Scale-out").
 * It stores what APPEND stores (tests/integration/drafts-append.test.ts).
 */
export const APPEND_ONE = new CompiledStatement<AppendOneValues>(
  (_tx, value) => sql`with appended as (
  insert into ${draftUpdates} (document_id, branch_name, section_id, update, author_id)
  values (${value("documentId")}::uuid, ${value("branchName")}::text, ${value("sectionId")}::uuid, ${value("update")}::bytea, ${value("authorId")}::uuid)
  returning id
), credited as (
  insert into ${draftAgentEditors} (document_id, branch_name, section_id, user_id, agent_key, agent)
  select ${value("documentId")}::uuid, ${value("branchName")}::text, ${value("sectionId")}::uuid, ${value("authorId")}::uuid, ${value("agentKey")}::text, ${value("agent")}::jsonb
  where ${value("authorId")}::uuid is not null and ${value("agentKey")}::text is not null
  on conflict do nothing
)
select id from appended`,
);

const agentKeyOf = (agent: AgentIdentity) => `${agent.kind}:${agent.id}`;

/** One row of APPEND's `rows`: an update (base64) and, for an agent's, who to credit. */
interface AppendRow {
  /** The row's place in the batch: the order its ids are given in. */
  position: number;
  document_id: string;
  branch_name: string;
  section_id: string;
  update: string;
  author_id: string | null;
  /** `<kind>:<id>` and the agent, or null (a person's own update, or one without author). */
  agent_key: string | null;
  agent: AgentIdentity | null;
}

/**
 * Updates appended, in order, and their agents credited, in one statement
 * compiled once (db.ts's CompiledStatement) whatever the number of rows:
 * what several rooms handed over together (collab/draft-appends.ts), or a
 * room's keystrokes that came while its previous batch was being stored.
 * The query builders' path it replaced cost each batch the builders' work
 * and, for agents' keystrokes, a second statement (the credit) with its own
 * round trip and commit (bench/README.md, "Scale-out"). `rows` is JSON, the
 * update in base64: one parameter for any batch, read the same by
 * PostgreSQL and PGlite.
 */
export const APPEND = new CompiledStatement<{ rows: string }>(
  (_tx, value) => sql`with batch as (
  select * from json_to_recordset(${value("rows")}::json)
    as r(position int, document_id uuid, branch_name text, section_id uuid, update text, author_id uuid, agent_key text, agent jsonb)
), appended as (
  insert into ${draftUpdates} (document_id, branch_name, section_id, update, author_id)
  select document_id, branch_name, section_id, decode(update, 'base64'), author_id from batch order by position
  returning id
), credited as (
  insert into ${draftAgentEditors} (document_id, branch_name, section_id, user_id, agent_key, agent)
  select distinct on (document_id, branch_name, section_id, author_id, agent_key) document_id, branch_name, section_id, author_id, agent_key, agent
  from batch where author_id is not null and agent_key is not null
  on conflict do nothing
)
select id from appended order by id`,
);

/** Appends updates in one statement (and credits the agents among their authors); resolves with their log ids, in order. */
export async function appendDraftUpdates(tx: Tx, updates: readonly NewDraftUpdate[]): Promise<number[]> {
  if (updates.length === 0) return [];
  if (updates.length === 1) {
    const [{ documentId, branchName, sectionId, update, authorId, agent }] = updates as [NewDraftUpdate];
    const credited = authorId && agent ? agent : null;
    const rows = await APPEND_ONE.rows<{ id: number | string }>(tx, {
      documentId,
      branchName,
      sectionId,
      update,
      authorId,
      agentKey: credited && agentKeyOf(credited),
      agent: credited && JSON.stringify(credited),
    });
    return rows.map((r) => Number(r.id));
  }
  const rows: AppendRow[] = updates.map(({ documentId, branchName, sectionId, update, authorId, agent }, position) => {
    const credited = authorId && agent ? agent : null;
    return {
      position,
      document_id: documentId,
      branch_name: branchName,
      section_id: sectionId,
      update: Buffer.from(update.buffer, update.byteOffset, update.byteLength).toString("base64"),
      author_id: authorId,
      agent_key: credited && agentKeyOf(credited),
      agent: credited,
    };
  });
  const ids = await APPEND.rows<{ id: number | string }>(tx, { rows: JSON.stringify(rows) });
  return ids.map((r) => Number(r.id));
}

const agentEditorsOfDraft = (key: DraftKey) =>
  and(eq(draftAgentEditors.documentId, key.documentId), eq(draftAgentEditors.branchName, key.branchName));

/** The agents that edited the draft since its last commit or discard (each agent of each person once). */
export async function draftAgentEditorsOf(tx: Tx, key: DraftKey): Promise<DraftAgentEditor[]> {
  const rows = await tx
    .selectDistinctOn([draftAgentEditors.userId, draftAgentEditors.agentKey], {
      userId: draftAgentEditors.userId,
      agent: draftAgentEditors.agent,
    })
    .from(draftAgentEditors)
    .where(agentEditorsOfDraft(key))
    .orderBy(draftAgentEditors.userId, draftAgentEditors.agentKey);
  return rows;
}

/**
 * Replaces a section's compacted state with one that includes the log up to
 * `through`, crediting the authors of the folded updates to the draft, and
 * drops those log entries. A compaction that lost a race (a later one
 * already landed) changes nothing.
 */
export async function compactSectionDraft(tx: Tx, key: SectionKey, state: Uint8Array, through: number): Promise<boolean> {
  return tx.transaction(async (t) => {
    const moved = await t
      .update(draftSections)
      .set({ state, compactedThrough: through })
      .where(and(sectionRowIs(key), sql`${draftSections.compactedThrough} < ${through}`))
      .returning({ sectionId: draftSections.sectionId });
    if (moved.length === 0) return false;
    await t
      .update(drafts)
      .set({
        editorIds: sql`array(select distinct e from unnest(${drafts.editorIds} || array(
          select ${draftUpdates.authorId} from ${draftUpdates}
          where ${updatesOfSection(key)} and ${draftUpdates.id} <= ${through}
            and ${draftUpdates.id} > ${drafts.settledThrough} and ${isNotNull(draftUpdates.authorId)})) e)`,
      })
      .where(draftIs(key));
    await t.delete(draftUpdates).where(and(updatesOfSection(key), lte(draftUpdates.id, through)));
    return true;
  });
}

/**
 * Moves a section draft from the committed version `fromBlobHash` to
 * `nextBlobHash`, appending `update` (the change between them, as applied to
 * the draft; null when there was nothing to apply) — unless another room, in
 * any process, moved the base first: then nothing is stored and the answer
 * is false (that room's change is in storage to take instead).
 */
export async function rebaseSectionDraft(
  tx: Tx,
  key: SectionKey,
  fromBlobHash: string | null,
  nextBlobHash: string,
  update: Uint8Array | null,
): Promise<boolean> {
  return tx.transaction(async (t) => {
    const moved = await t
      .update(draftSections)
      .set({ baseBlobHash: nextBlobHash })
      .where(and(sectionRowIs(key), sql`${draftSections.baseBlobHash} is not distinct from ${fromBlobHash}`))
      .returning({ sectionId: draftSections.sectionId });
    if (moved.length === 0) return false;
    if (update) await appendDraftUpdates(t, [{ ...key, update, authorId: null }]);
    return true;
  });
}

export async function deleteSectionDraft(tx: Tx, key: SectionKey): Promise<void> {
  await tx.delete(draftAgentEditors).where(and(agentEditorsOfDraft(key), eq(draftAgentEditors.sectionId, key.sectionId)));
  await tx.delete(draftUpdates).where(updatesOfSection(key));
  await tx.delete(draftSections).where(sectionRowIs(key));
}

export async function setDraftBase(tx: Tx, key: DraftKey, baseCommitId: string): Promise<void> {
  await tx.update(drafts).set({ baseCommitId, updatedAt: new Date() }).where(draftIs(key));
}

/** The newest log id of the draft (0 when the log is empty). */
export async function lastDraftUpdateId(tx: Tx, key: DraftKey): Promise<number> {
  const [row] = await tx
    .select({ last: sql<string | null>`max(${draftUpdates.id})` })
    .from(draftUpdates)
    .where(updatesOfDraft(key));
  return Number(row?.last ?? 0);
}

/** Everyone who edited the draft since its last commit or discard. */
export async function draftEditors(tx: Tx, key: DraftKey): Promise<string[]> {
  const draft = await findDraft(tx, key);
  if (!draft) return [];
  const logged = await tx
    .selectDistinct({ authorId: draftUpdates.authorId })
    .from(draftUpdates)
    .where(and(updatesOfDraft(key), gt(draftUpdates.id, draft.settledThrough), isNotNull(draftUpdates.authorId)));
  return [...new Set([...draft.editorIds, ...logged.map((r) => r.authorId!)])].sort();
}

/**
 * After a commit or discard: the draft is based on `baseCommitId` and its log
 * up to `through` is settled. Sections whose live edits it left in the draft
 * (`leftSectionIds`: the caller could not commit or discard them) keep their
 * editors (and agents) credited: the authors of their settled log entries, and the editors
 * compactions folded into the draft (which no longer say which section).
 */
export async function settleDraft(
  tx: Tx,
  key: DraftKey,
  baseCommitId: string,
  through: number,
  leftSectionIds: readonly string[] = [],
): Promise<void> {
  let editorIds: string[] = [];
  if (leftSectionIds.length > 0) {
    const draft = await findDraft(tx, key);
    const logged = await tx
      .selectDistinct({ authorId: draftUpdates.authorId })
      .from(draftUpdates)
      .where(
        and(
          updatesOfDraft(key),
          anyOf(draftUpdates.sectionId, [...leftSectionIds]),
          gt(draftUpdates.id, draft?.settledThrough ?? 0),
          lte(draftUpdates.id, through),
          isNotNull(draftUpdates.authorId),
        ),
      );
    editorIds = [...new Set([...(draft?.editorIds ?? []), ...logged.map((r) => r.authorId!)])].sort();
  }
  await tx.update(drafts).set({ baseCommitId, settledThrough: through, editorIds, updatedAt: new Date() }).where(draftIs(key));
  await tx
    .delete(draftAgentEditors)
    .where(
      leftSectionIds.length > 0
        ? and(agentEditorsOfDraft(key), not(anyOf(draftAgentEditors.sectionId, leftSectionIds)))
        : agentEditorsOfDraft(key),
    );
}

/**
 * A column named with its table, for a correlated subquery: drizzle writes a
 * one-table query's columns unqualified, and inside a subquery over a table
 * with a column of the same name that name means the inner one (the outer
 * draft's document and branch were read as the update's own, so every
 * document's editors were counted).
 */
const outer = (column: AnyPgColumn) => sql`${sql.identifier(getTableName(column.table))}.${sql.identifier(column.name)}`;

/**
 * Per branch of a document whose draft was edited since its last commit or
 * discard, who edited it (sorted): the editors a compaction folded into the
 * draft row plus the authors of the log since it settled.
 */
export async function draftEditorsByBranch(tx: Tx, documentId: string): Promise<Map<string, string[]>> {
  const rows = await tx
    .select({
      branchName: drafts.branchName,
      editorIds: sql<string[]>`array(
        select distinct e from unnest(${drafts.editorIds} || array(
          select ${draftUpdates.authorId} from ${draftUpdates} where ${draftUpdates.documentId} = ${outer(drafts.documentId)}
            and ${draftUpdates.branchName} = ${outer(drafts.branchName)} and ${draftUpdates.id} > ${outer(drafts.settledThrough)}
            and ${isNotNull(draftUpdates.authorId)})) as e order by e)::text[]`,
    })
    .from(drafts)
    .where(eq(drafts.documentId, documentId));
  return new Map(rows.filter((r) => r.editorIds.length > 0).map((r) => [r.branchName, r.editorIds]));
}
