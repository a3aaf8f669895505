/**
 * The merge oracle (tests/unit/merge-vs-git.test.ts) extended to changesets,
 * through the real tools: random histories on several documents at once (edits
 * and deletions on both branches, merges of main into the topic branch and of
 * the topic into main through merge requests, resolved at random), then one
 * changeset merging topic into main for every document. Each document's
 * history is replayed into git (one file per section holding its line, the
 * same trees and parents), and for every item the sections the changeset's
 * analysis reports in conflict must be the files `git merge-tree` reports
 * conflicted, and every other section must end on main as in git's tree.
 */
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { text } from "../helpers/blocks";
import { startTestServer, type TestServer, type TestUser } from "../helpers/server";
import { createRng } from "../helpers/fuzz-rng";
import { gitAvailable, scratchRepository } from "../helpers/git-oracle";

/** A seeded random stream (mulberry32), so failures reproduce. */
const seededRandom = (seed: number) => createRng(seed).next;

/** More rounds for a deeper search: CHANGESETS_VS_GIT_ROUNDS=20 npx vitest run tests/integration/changesets-vs-git.test.ts */
const ROUNDS = Number(process.env.CHANGESETS_VS_GIT_ROUNDS ?? 3);
const DOCUMENTS = 3;

let server: TestServer;
let owner: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  owner = await server.createUser("owner@example.test", "Olive Owner");
});
afterAll(async () => {
  await server?.close();
});

// biome-ignore lint/suspicious/noExplicitAny: results are read field by field below
const call = (tool: "documents" | "sections" | "merge_requests" | "read" | "changesets", input: Record<string, unknown>): Promise<any> =>
  server.callToolAsSent(tool, owner.userId, input);

type Files = Map<string, string>;
const lineOf = (section: { content: Array<{ text?: string }> }) => section.content[0]?.text ?? "";

/** Merges `sourceBranch` into `targetBranch` through a merge request, each conflict resolved to a random side. */
async function mergeThroughRequest(documentId: string, sourceBranch: string, targetBranch: string, rnd: () => number): Promise<boolean> {
  let request: { mergeRequestId: string };
  try {
    request = await call("merge_requests", { action: "create", documentId, sourceBranch, targetBranch, title: "step" });
  } catch (error) {
    if ((error as { code?: string }).code === "NOTHING_TO_MERGE") return false;
    throw error;
  }
  const analysis = await call("merge_requests", { action: "analyze", mergeRequestId: request.mergeRequestId });
  const resolutions = (analysis.sections as Array<{ sectionId: string; status: string }>)
    .filter((s) => s.status === "conflict")
    .map((s) => ({ sectionId: s.sectionId, resolution: rnd() < 0.5 ? "source" : "target" }));
  await call("merge_requests", { action: "execute", mergeRequestId: request.mergeRequestId, resolutions });
  return true;
}

/** A document with four one-line sections and a random history on main and topic. */
async function randomHistory(round: number, index: number, rnd: () => number) {
  const int = (n: number) => Math.floor(rnd() * n);
  const doc = await call("documents", {
    action: "create",
    path: `oracle/${round}/doc-${index}`,
    sections: [0, 1, 2, 3].map((s) => ({ name: "S", content: [text(`s${s} v0`)] })),
  });
  const documentId: string = doc.documentId;
  const sectionIds: string[] = doc.sectionIds;
  await call("documents", { action: "create_branch", documentId, branchName: "topic" });
  const edit = async (branchName: string) => {
    const read = await call("read", { documentId, branchName });
    const present: string[] = read.sections.map((s: { sectionId: string }) => s.sectionId);
    for (let k = 1 + int(2); k > 0; k--) {
      const sectionId = sectionIds[int(sectionIds.length)]!;
      if (!present.includes(sectionId)) continue;
      if (present.length > 1 && rnd() < 0.2) {
        await call("sections", { action: "delete", documentId, branchName, sectionId });
        present.splice(present.indexOf(sectionId), 1);
      } else {
        await call("sections", {
          action: "update",
          documentId,
          branchName,
          sectionId,
          newContent: [text(`s${sectionIds.indexOf(sectionId)} v${1 + int(3)}`)],
        });
      }
    }
  };
  for (let step = 2 + int(6); step > 0; step--) {
    const r = rnd();
    if (r < 0.35) await edit("topic");
    else if (r < 0.7) await edit("main");
    else if (r < 0.9) await mergeThroughRequest(documentId, "main", "topic", rnd);
    else await mergeThroughRequest(documentId, "topic", "main", rnd);
  }
  // Something to merge at the end; now and then main stays behind (a fast-forward item).
  await edit("topic");
  if (rnd() < 0.7) await edit("main");
  return documentId;
}

/** Every commit reachable from both branches, with its parents and its sections' lines (by section id). */
async function commitsOf(documentId: string) {
  const commits = new Map<string, { parents: string[]; files: Files }>();
  for (const branchName of ["main", "topic"]) {
    let cursor: string | undefined;
    do {
      const page = await call("documents", { action: "log", documentId, branchName, limit: 200, ...(cursor ? { cursor } : {}) });
      for (const c of page.commits as Array<{ commitId: string; parentIds: string[] }>) {
        if (commits.has(c.commitId)) continue;
        const shown = await call("documents", { action: "show", documentId, commitId: c.commitId });
        const files: Files = new Map(
          shown.sections.map((s: { sectionId: string; content: Array<{ text?: string }> }) => [s.sectionId, lineOf(s)]),
        );
        commits.set(c.commitId, { parents: c.parentIds, files });
      }
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
  }
  return commits;
}

/** A fast-import stream creating every commit (parents first) and refs/heads/<name> for the given heads. */
function fastImport(commits: Map<string, { parents: string[]; files: Files }>, heads: Record<string, string>): string {
  const out: string[] = [];
  const marks = new Map<string, number>();
  let time = 1_700_000_000;
  const emit = (id: string) => {
    if (marks.has(id)) return;
    const commit = commits.get(id)!;
    for (const p of commit.parents) emit(p);
    const mark = marks.size + 1;
    marks.set(id, mark);
    out.push(`commit refs/import/${id}`, `mark :${mark}`, `committer T <t@example.com> ${time++} +0000`, `data ${id.length}`, id);
    const [first, ...rest] = commit.parents;
    if (first) out.push(`from :${marks.get(first)!}`);
    for (const p of rest) out.push(`merge :${marks.get(p)!}`);
    out.push("deleteall");
    for (const [file, line] of commit.files) out.push(`M 100644 inline ${file}`, `data ${Buffer.byteLength(`${line}\n`)}`, line);
    out.push("");
  };
  for (const id of commits.keys()) emit(id);
  for (const [name, id] of Object.entries(heads)) out.push(`reset refs/heads/${name}`, `from :${marks.get(id)!}`, "");
  return `${out.join("\n")}\n`;
}

describe.skipIf(!gitAvailable())("changesets agree with git merge-tree, item by item", () => {
  test(`${ROUNDS} rounds of ${DOCUMENTS} documents with random histories`, async () => {
    let fastForwards = 0;
    let conflicts = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const rnd = seededRandom(27_000 + round);
      const documentIds: string[] = [];
      for (let i = 0; i < DOCUMENTS; i++) documentIds.push(await randomHistory(round, i, rnd));
      const { git, remove } = scratchRepository("quire-changesets-vs-git-");
      try {
        const changeset = await call("changesets", {
          action: "create",
          sourceBranch: "topic",
          targetBranch: "main",
          title: `Oracle ${round}`,
          documentIds,
        });
        const analysis = await call("changesets", { action: "analyze", changesetId: changeset.changesetId });
        const expected = new Map<string, { conflicts: string[]; gitTree: Map<string, string>; source: Files }>();
        for (const item of analysis.analyses as Array<{
          documentId: string;
          analysis: {
            fastForward: boolean;
            sourceHeadCommitId: string;
            targetHeadCommitId: string;
            sections: Array<{ sectionId: string; status: string }>;
          };
        }>) {
          const { documentId, analysis: a } = item;
          if (a.fastForward) fastForwards += 1;
          const commits = await commitsOf(documentId);
          git(
            ["fast-import", "--quiet"],
            fastImport(commits, { [`${documentId}-topic`]: a.sourceHeadCommitId, [`${documentId}-main`]: a.targetHeadCommitId }),
          );
          const merged = git([
            "-c",
            "merge.renames=false",
            "-c",
            "diff.renames=false",
            "merge-tree",
            "--write-tree",
            "--name-only",
            "--no-messages",
            `${documentId}-topic`,
            `${documentId}-main`,
          ]);
          const [treeId, ...conflicted] = merged.stdout.split("\n").filter((l) => l !== "");
          const gitTree = new Map<string, string>();
          for (const line of git(["ls-tree", treeId!]).stdout.split("\n").filter(Boolean)) {
            const [meta, name] = line.split("\t") as [string, string];
            gitTree.set(name, git(["cat-file", "blob", meta.split(" ")[2]!]).stdout.replace(/\n$/, ""));
          }
          const ours = a.sections.filter((s) => s.status === "conflict").map((s) => s.sectionId);
          conflicts += ours.length;
          expect(ours.sort(), `round ${round}, document ${documentId}`).toEqual([...new Set(conflicted)].sort());
          expected.set(documentId, { conflicts: ours, gitTree, source: commits.get(a.sourceHeadCommitId)!.files });
        }
        // Every conflict resolved with the source's version; everything else as git merged it.
        const itemResolutions = [...expected].map(([documentId, e]) => ({
          documentId,
          resolutions: e.conflicts.map((sectionId) => ({ sectionId, resolution: "source" })),
        }));
        const executed = await call("changesets", { action: "execute", changesetId: changeset.changesetId, itemResolutions });
        expect(executed.merged).toHaveLength(DOCUMENTS);
        for (const [documentId, e] of expected) {
          const main = await call("read", { documentId, branchName: "main" });
          const onMain = new Map<string, string>(
            main.sections.map((s: { sectionId: string; content: Array<{ text?: string }> }) => [s.sectionId, lineOf(s)]),
          );
          const sections = new Set([...onMain.keys(), ...e.gitTree.keys(), ...e.conflicts]);
          for (const sectionId of sections) {
            const want = e.conflicts.includes(sectionId) ? (e.source.get(sectionId) ?? null) : (e.gitTree.get(sectionId) ?? null);
            expect(onMain.get(sectionId) ?? null, `round ${round}, document ${documentId}, section ${sectionId}`).toBe(want);
          }
        }
      } finally {
        remove();
      }
    }
    console.log(`changesets vs git: ${ROUNDS * DOCUMENTS} items, ${fastForwards} fast-forwards, ${conflicts} conflicting sections`);
    // The histories do exercise both kinds of item and conflicts.
    expect(fastForwards + conflicts).toBeGreaterThan(0);
  }, 300_000);
});
