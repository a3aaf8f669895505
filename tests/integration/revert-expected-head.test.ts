/**
 * `documents` `revert` with the head it was decided on, through tRPC as the
 * history page calls it (a person's session caller): it restores the commit's
 * state while the branch is where the page saw it, and once someone else has
 * committed it is BRANCH_MOVED and changes nothing (a revert would take their
 * commit back unseen). Without the head, agents' reverts work as before.
 */
import { afterAll, beforeAll, expect, test } from "vitest";
import { isDomainError } from "@/server/core/errors";
import { text } from "../helpers/blocks";
import { startTestServer, type TestServer, type TestUser } from "../helpers/server";

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

/** The DomainError a call is refused with. */
async function refusalOf(run: Promise<unknown>) {
  try {
    await run;
  } catch (error) {
    const cause = (error as { cause?: unknown }).cause;
    if (isDomainError(cause)) return cause;
  }
  throw new Error("the call was not refused with a DomainError");
}

test("a revert naming the head it saw restores the commit; one whose branch moved since is BRANCH_MOVED and changes nothing", async () => {
  const doc = await server.callTool("documents", owner.userId, {
    action: "create",
    path: "history/revert-head",
    sections: [{ name: "Intro", content: [text("first")] }],
  });
  const address = { documentId: doc.documentId, branchName: "main" };
  const sectionId = doc.sectionIds[0]!;
  const write = (content: string, userId = owner.userId) =>
    server.callTool("sections", userId, { action: "update", ...address, sectionId, newContent: [text(content)] });
  const intro = async () => (await server.trpcCaller(owner).read(address)).sections[0]!.content;
  const head = async () => (await server.callTool("documents", owner.userId, { action: "log", ...address, limit: 1 })).commits[0]!.commitId;

  const second = await write("second");
  const caller = server.trpcCaller(member);
  const reverted = await caller.documents({ action: "revert", ...address, commitId: doc.commitId, expectedHeadCommitId: second.commitId });
  expect(reverted).toMatchObject({ changed: true });
  expect(await intro()).toEqual([text("first")]);

  // The page showed `seen`; then someone else committed. Reverting would take their commit back with it.
  const seen = await write("third");
  const theirs = await write("theirs, unseen by the reverter");
  const refused = await refusalOf(
    caller.documents({ action: "revert", ...address, commitId: doc.commitId, expectedHeadCommitId: seen.commitId }),
  );
  expect(refused.code).toBe("BRANCH_MOVED");
  expect(refused.details).toEqual({ expectedHeadCommitId: seen.commitId, headCommitId: theirs.commitId });
  expect(await head()).toBe(theirs.commitId);
  expect(await intro()).toEqual([text("theirs, unseen by the reverter")]);

  // An agent's revert without a head works as it always did.
  const byAgent = await server.trpcClient(member.token).documents.mutate({ action: "revert", ...address, commitId: doc.commitId });
  expect(byAgent).toMatchObject({ changed: true });
  expect(await intro()).toEqual([text("first")]);
});

test("the head must be a commit id: anything else is VALIDATION_FAILED and reverts nothing", async () => {
  const doc = await server.callTool("documents", owner.userId, {
    action: "create",
    path: "history/revert-bad-head",
    sections: [{ name: "Intro", content: [text("first")] }],
  });
  const address = { documentId: doc.documentId, branchName: "main" };
  const second = await server.callTool("sections", owner.userId, {
    action: "update",
    ...address,
    sectionId: doc.sectionIds[0]!,
    newContent: [text("second")],
  });
  const refused = await refusalOf(
    server.trpcCaller(member).documents({ action: "revert", ...address, commitId: doc.commitId, expectedHeadCommitId: "the newest one" }),
  );
  expect(refused.code).toBe("VALIDATION_FAILED");
  const log = await server.callTool("documents", owner.userId, { action: "log", ...address, limit: 1 });
  expect(log.commits[0]!.commitId).toBe(second.commitId);
});
