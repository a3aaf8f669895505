/** Equal decisions held once (server/collab/shared-values.ts): what comes back equals what was decided, and unequal decisions never share. */
import { describe, expect, it } from "vitest";
import type { DocumentAccess } from "@/server/access/documents";
import { EqualValues, SharedDecisions } from "@/server/collab/shared-values";

const documentRow = (updatedAt: Date) =>
  ({
    id: "5b0d7c1e-8f0a-4b1c-9d2e-3f4a5b6c7d8e",
    workspaceId: "0a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d",
    path: "notes/plan",
    defaultBranch: "main",
    createdBy: "user-1",
    createdAt: new Date("2026-11-01T10:00:00.000Z"),
    updatedAt,
  }) as unknown as DocumentAccess["document"];

const accessOf = (options: { grant?: "read" | "edit" | null; updatedAt?: Date; role?: "member" | "guest" } = {}): DocumentAccess => ({
  document: documentRow(options.updatedAt ?? new Date("2026-11-02T10:00:00.000Z")),
  subject: { kind: "member", userId: "user-2", role: options.role ?? "member", principal: "person" },
  facts: { createdBy: "user-1", defaultPermission: "read", aiAccess: "read", grant: options.grant ?? null },
  permission: options.grant === "edit" ? "edit" : "read",
  canManage: false,
});

describe("EqualValues", () => {
  it("hands back the value held for an equal one, and the value itself otherwise", () => {
    const values = new EqualValues();
    const first = { userId: "u", name: "Ada" };
    expect(values.shared(first)).toBe(first);
    expect(values.shared({ userId: "u", name: "Ada" })).toBe(first);
    const other = { userId: "u", name: "Ada Lovelace" };
    expect(values.shared(other)).toBe(other);
    expect(values.size).toBe(2);
  });

  it("tells dates apart by their instant", () => {
    const values = new EqualValues();
    const a = { at: new Date("2026-11-02T10:00:00.000Z") };
    expect(values.shared({ at: new Date("2026-11-02T10:00:00.000Z") })).not.toBe(a);
    const held = values.shared(a);
    expect(values.shared({ at: new Date("2026-11-02T10:00:00.001Z") })).not.toBe(held);
  });
});

describe("SharedDecisions", () => {
  it("keeps each access object and shares its parts with an equal decision's", () => {
    const decisions = new SharedDecisions();
    const first = accessOf();
    const second = accessOf();
    const expected = structuredClone(second);
    expect(decisions.access(first)).toBe(first);
    expect(decisions.access(second)).toBe(second);
    expect(second).not.toBe(first);
    expect(second.document).toBe(first.document);
    expect(second.subject).toBe(first.subject);
    expect(second.facts).toBe(first.facts);
    expect(second).toEqual(expected);
  });

  it("never shares a part that differs: a grant, a role, a document row changed since", () => {
    const decisions = new SharedDecisions();
    const first = decisions.access(accessOf());
    const granted = accessOf({ grant: "edit" });
    const expected = structuredClone(granted);
    decisions.access(granted);
    expect(granted.facts).not.toBe(first.facts);
    expect(granted.document).toBe(first.document);
    expect(granted).toEqual(expected);
    const viewer = decisions.access(accessOf({ role: "guest" }));
    expect(viewer.subject).not.toBe(first.subject);
    expect(viewer.subject).toEqual({ kind: "member", userId: "user-2", role: "guest", principal: "person" });
    const renamed = decisions.access(accessOf({ updatedAt: new Date("2026-11-03T10:00:00.000Z") }));
    expect(renamed.document).not.toBe(first.document);
    expect(renamed.document.updatedAt).toEqual(new Date("2026-11-03T10:00:00.000Z"));
  });

  it("shares key sets by their members, in any order, and never an empty set with a full one", () => {
    const decisions = new SharedDecisions();
    const first = decisions.keys(new Set(["b", "a"]));
    expect(decisions.keys(new Set(["a", "b"]))).toBe(first);
    const empty = decisions.keys(new Set());
    expect(empty).not.toBe(first);
    expect([...empty]).toEqual([]);
    expect([...decisions.keys(new Set(["a"]))]).toEqual(["a"]);
  });

  it("shares an actor, a presence and a credential only with an equal one", () => {
    const decisions = new SharedDecisions();
    const token = decisions.credential({ kind: "token", token: "qt_1" });
    expect(decisions.credential({ kind: "token", token: "qt_1" })).toBe(token);
    expect(decisions.credential({ kind: "share", token: "qt_1" })).toEqual({ kind: "share", token: "qt_1" });
    expect(decisions.actor(null)).toBeNull();
    const person = decisions.presence({ userId: "u", name: "Ada" });
    expect(decisions.presence({ userId: "u", name: "Ada (agent)" })).not.toBe(person);
  });
});
