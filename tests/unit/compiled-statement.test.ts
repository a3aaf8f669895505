/**
 * The head move's statement is built once with placeholders (db.ts's
 * CompiledStatement) and run with values. Filled with a move's values it must
 * be exactly the statement drizzle's builders write with those values in
 * place: same text, same parameters in the same order.
 */
import { fillPlaceholders, is, Param, Placeholder } from "drizzle-orm";
import { drizzle } from "drizzle-orm/postgres-js";
import { describe, expect, it } from "vitest";
import * as schema from "@/db/schema";
import type { CompiledStatement, StatementValues, Tx } from "@/server/store/db";
import { CREATE_BRANCH, MOVE_HEAD } from "@/server/store/commit-to-branch";
import { APPEND, APPEND_ONE } from "@/server/store/drafts";

const db = drizzle.mock({ schema }) as unknown as Tx;

const rows = JSON.stringify([{ hash: "h1", body: { name: 'Caf\u00e9 "quoted" \\ \' $1', blocks: [] } }]);
const common = {
  documentId: "0b7d3a52-1f7e-4d8e-9a51-5a3f9c2f4d10",
  branchName: "agent/it's-mine",
  headCommitId: "6f1c1a0e-6a5b-4b8e-9f11-2b7c3d4e5f60",
  now: "2026-11-23T13:45:00.000Z",
  blobs: rows,
  trees: "[]",
  commits: rows,
  comments: "[]",
};

function placeholderNames(statement: CompiledStatement<StatementValues>): string[] {
  return statement
    .query(db)
    .params.map((p) => (is(p, Placeholder) ? p.name : is(p, Param) && is(p.value, Placeholder) ? p.value.name : null))
    .filter((name): name is string => name !== null);
}

function expectCompiledEqualsInline<V extends StatementValues>(statement: CompiledStatement<V>, values: V) {
  const compiled = statement.query(db);
  const inline = statement.inline(db, values);
  expect(compiled.sql).toBe(inline.sql);
  expect(fillPlaceholders(compiled.params, values)).toEqual(inline.params);
  // Every value has its place, and nothing else is left to fill.
  expect(new Set(placeholderNames(statement as unknown as CompiledStatement<StatementValues>))).toEqual(new Set(Object.keys(values)));
}

describe("the head move's compiled statement", () => {
  it("moves a branch exactly as the builders write it, for every mirror case", () => {
    for (const [mirror, description, deleted] of [
      [true, "A description", false],
      [false, null, true],
      [true, null, false],
    ] as const) {
      expectCompiledEqualsInline(MOVE_HEAD, {
        ...common,
        fromCommitId: "9e2d4c6b-8a1f-4e3d-b5c7-1a2b3c4d5e6f",
        mirror,
        path: "/notes/plan",
        name: "Plan",
        description,
        deleted,
      });
    }
  });

  it("creates a branch exactly as the builders write it", () => {
    expectCompiledEqualsInline(CREATE_BRANCH, { ...common, actorId: "3c5e7a9b-2d4f-4a6c-8e1b-5d7f9a1c3e5b" });
  });

  it("writes its text once", () => {
    expect(MOVE_HEAD.query(db)).toBe(MOVE_HEAD.query(db));
  });
});

describe("the live draft's appends (drafts.ts APPEND, APPEND_ONE)", () => {
  it("is the statement written with the values in place", () => {
    const rows = JSON.stringify([
      {
        position: 0,
        document_id: common.documentId,
        branch_name: common.branchName,
        section_id: common.headCommitId,
        update: "AQI=",
        author_id: "3c5e7a9b-2d4f-4a6c-8e1b-5d7f9a1c3e5b",
        agent_key: "api_token:1",
        agent: { kind: "api_token", id: "1", name: "CI" },
      },
    ]);
    expectCompiledEqualsInline(APPEND, { rows });
  });

  it("appends one update as the statement written with the values in place, for an agent's update and a person's", () => {
    const update = {
      documentId: common.documentId,
      branchName: common.branchName,
      sectionId: common.headCommitId,
      update: Uint8Array.of(1, 2),
    };
    expectCompiledEqualsInline(APPEND_ONE, {
      ...update,
      authorId: "3c5e7a9b-2d4f-4a6c-8e1b-5d7f9a1c3e5b",
      agentKey: "api_token:1",
      agent: JSON.stringify({ kind: "api_token", id: "1", name: "CI" }),
    });
    expectCompiledEqualsInline(APPEND_ONE, { ...update, authorId: null, agentKey: null, agent: null });
  });
});
