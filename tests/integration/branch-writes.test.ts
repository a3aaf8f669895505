/**
 * The group-commit write path (server/store/group-commit.ts) driven
 * directly, where a test needs to control when each write runs: a second
 * database handle stands for another Quire process on the same database.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { type DatabaseHandle, openDatabase } from "@/db/client";
import { type BranchChange, type BranchState, type BranchWrite, writeOnBranch } from "@/server/store/group-commit";
import { type TestDatabase, testDatabaseUrl } from "../helpers/database";
import { callMcp, startTestServer, type TestServer, type TestUser } from "../helpers/server";

let server: TestServer;
let owner: TestUser;
let mcp: Client;
let elsewhere: DatabaseHandle | undefined;

beforeAll(async () => {
  server = await startTestServer();
  owner = await server.createUser("owner@example.test", "Olive Owner");
  mcp = await server.mcpClient(owner.token);
  const url = (server.database as TestDatabase).url;
  if (url) elsewhere = await openDatabase({ url, maxConnections: 2 });
}, 60_000);

afterAll(async () => {
  await mcp?.close();
  await elsewhere?.close();
  await server?.close();
});

async function newDocument(path: string): Promise<string> {
  const { documentId } = await callMcp<{ documentId: string }>(mcp, "documents", {
    action: "create",
    path,
    sections: [{ name: "Only", content: [{ blockType: "text", text: "v0" }] }],
  });
  return documentId;
}

/** A write by the owner whose change is `change` (any refusal it throws fails it alone). */
function write<R>(documentId: string, change: (state: BranchState) => Promise<BranchChange<R>> | BranchChange<R>): BranchWrite<R> {
  return {
    documentId,
    branchName: "main",
    authorId: owner.userId,
    agent: null,
    now: new Date(),
    admit: () => {},
    change: async (state) => change(state),
  };
}

/** A change that sets one document property (a real change of the tree, so a commit). */
const setProperty =
  (value: string) =>
  (state: BranchState): BranchChange<null> => ({
    tree: { ...state.tree, properties: { ...state.tree.properties, note: value } },
    newSections: [],
    newComments: [],
    message: `Set note to ${value}`,
    result: null,
  });

describe("group commit", () => {
  test("writes queued behind a running batch are applied in call order, each its own commit", async () => {
    const documentId = await newDocument("bw/order");
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const first = writeOnBranch(
      server.db,
      write(documentId, async (state) => {
        await gate;
        return setProperty("first")(state);
      }),
    );
    const seen: string[] = [];
    const queued = ["a", "b", "c"].map((value) =>
      writeOnBranch(
        server.db,
        write(documentId, (state) => {
          seen.push(String(state.tree.properties.note));
          return setProperty(value)(state);
        }),
      ),
    );
    release();
    const results = await Promise.all([first, ...queued]);
    expect(seen).toEqual(["first", "a", "b"]);
    expect(new Set(results.map((r) => r.commitId)).size).toBe(4);
    const log = await callMcp<{ commits: Array<{ commitId: string; parentIds: string[] }> }>(mcp, "documents", {
      action: "log",
      documentId,
      limit: 10,
    });
    expect(log.commits.slice(0, 4).map((c) => c.commitId)).toEqual(results.map((r) => r.commitId).reverse());
  });

  test.skipIf(!testDatabaseUrl())(
    "a refusal or no-op built on the tip this process remembers is judged again when another process moved the branch",
    async () => {
      const documentId = await newDocument("bw/stale-tip");
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      // Batch 1 keeps the branch's queue alive until released, then commits: its tip is remembered.
      const first = writeOnBranch(
        server.db,
        write(documentId, async (state) => {
          await gate;
          return setProperty("here")(state);
        }),
      );
      let movedElsewhere: string | undefined;
      // Batch 2 first lets "another process" commit, then answers "nothing to do" from the state it was given.
      const second = writeOnBranch(
        server.db,
        write(documentId, async (state) => {
          if (!movedElsewhere) movedElsewhere = (await writeOnBranch(elsewhere!.db, write(documentId, setProperty("elsewhere")))).commitId;
          return { tree: state.tree, newSections: [], newComments: [], message: "no-op", result: { sawHead: state.head.id } };
        }),
      );
      release();
      const [firstResult, secondResult] = await Promise.all([first, second]);
      expect(movedElsewhere).toBeDefined();
      expect(movedElsewhere).not.toBe(firstResult.commitId);
      // Judged on the stored head (the other process's commit), not on the remembered tip.
      expect(secondResult).toMatchObject({ changed: false, commitId: movedElsewhere, result: { sawHead: movedElsewhere } });
    },
  );
});
