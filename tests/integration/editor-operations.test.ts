/**
 * The editor's composite operations as tool actions, through tRPC as the
 * browser calls them (a person's session caller): `documents` `undo` (the
 * Undo after a section deletion) takes back the head it is given and nothing
 * else, and `sections` `move` places a section by the branch as the write
 * finds it, hidden sections keeping their slots.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { isDomainError } from "@/server/core/errors";
import { text } from "../helpers/blocks";
import { mergeSectionOverrides, startTestServer, type TestServer, type TestUser } from "../helpers/server";

let server: TestServer;
let owner: TestUser;
let member: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  owner = await server.createUser("owner@example.test", "Olive Owner");
  member = await server.createUser("member@example.test", "Mo Member");
});

afterAll(async () => {
  await server?.close();
});

/** The DomainError code a call is refused with. */
async function refusal(run: Promise<unknown>): Promise<string> {
  try {
    await run;
    return "allowed";
  } catch (error) {
    const cause = (error as { cause?: unknown }).cause;
    return isDomainError(cause) ? cause.code : "thrown";
  }
}

const names = async (documentId: string, user = owner) =>
  (await server.trpcCaller(user).read({ documentId, branchName: "work" })).sections
    .toSorted((a, b) => a.position - b.position)
    .map((s) => s.name);

async function documentOf(path: string, sectionNames: string[]) {
  const doc = await server.callTool("documents", owner.userId, {
    action: "create",
    path,
    sections: sectionNames.map((name) => ({ name, content: [text(name.toLowerCase())] })),
  });
  await server.callTool("documents", owner.userId, { action: "create_branch", documentId: doc.documentId, branchName: "work" });
  return doc;
}

describe("documents undo", () => {
  test("takes back the head it is given: the deleted section returns with its id; an older head is BRANCH_MOVED and changes nothing", async () => {
    const doc = await documentOf("ops/undo", ["A", "B", "C"]);
    const caller = server.trpcCaller(member);
    const address = { documentId: doc.documentId, branchName: "work" };
    const deleted = await caller.sections({ action: "delete", ...address, sectionId: doc.sectionIds[1]! });
    const undone = await caller.documents({ action: "undo", ...address, expectedHeadCommitId: deleted.commitId });
    expect(undone).toMatchObject({ changed: true, undoneCommitId: deleted.commitId });
    expect(await names(doc.documentId)).toEqual(["A", "B", "C"]);
    const read = await caller.read(address);
    expect(read.sections.find((s) => s.name === "B")!.sectionId).toBe(doc.sectionIds[1]);

    // Deleted again, then someone else writes: undoing the delete would take their write with it.
    const again = await caller.sections({ action: "delete", ...address, sectionId: doc.sectionIds[1]! });
    await server.callTool("sections", owner.userId, {
      action: "update",
      ...address,
      sectionId: doc.sectionIds[0]!,
      newContent: [text("a2")],
    });
    expect(await refusal(caller.documents({ action: "undo", ...address, expectedHeadCommitId: again.commitId }))).toBe("BRANCH_MOVED");
    expect(await names(doc.documentId)).toEqual(["A", "C"]);
  });
});

describe("sections move", () => {
  test("before a section, to the end, before itself (no commit); hidden sections keep their slots", async () => {
    const doc = await documentOf("ops/move", ["A", "Hidden", "B", "C"]);
    const [a, hidden, b, c] = doc.sectionIds as [string, string, string, string];
    await mergeSectionOverrides(server, owner.userId, { documentId: doc.documentId, sectionId: hidden }, { defaultPermission: "none" });
    await server.callTool("documents", owner.userId, { action: "create_branch", documentId: doc.documentId, branchName: "work2" });
    const caller = server.trpcCaller(member);
    const address = { documentId: doc.documentId, branchName: "work2" };
    const order = async () =>
      (await server.trpcCaller(owner).read(address)).sections.toSorted((x, y) => x.position - y.position).map((s) => s.name);

    await caller.sections({ action: "move", ...address, sectionId: c, beforeSectionId: a });
    expect(await order()).toEqual(["C", "Hidden", "A", "B"]);
    await caller.sections({ action: "move", ...address, sectionId: c, beforeSectionId: null });
    expect(await order()).toEqual(["A", "Hidden", "B", "C"]);
    const still = await caller.sections({ action: "move", ...address, sectionId: b, beforeSectionId: b });
    expect(still.changed).toBe(false);
    expect(await refusal(caller.sections({ action: "move", ...address, sectionId: a, beforeSectionId: hidden }))).toBe("NOT_FOUND");
    expect(await refusal(caller.sections({ action: "move", ...address, sectionId: hidden, beforeSectionId: null }))).toBe("NOT_FOUND");
    expect(await order()).toEqual(["A", "Hidden", "B", "C"]);
  });
});
