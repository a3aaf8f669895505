/**
 * Changeset benchmark (issue 27): 50 documents of 200 sections, 20 sections
 * changed per document on the source branch (and 5 others on main, so every
 * item is a real three-way merge with a merge commit, no conflicts), gathered
 * into one changeset by path prefix; `analyze` and `execute` timed in-process
 * through runTool (no HTTP), on real PostgreSQL.
 *
 *   npx tsx bench/changesets.ts          # PostgreSQL at DATABASE_URL or postgres://postgres@127.0.0.1:5432/postgres
 *   BENCH_RUNS=10 npx tsx bench/changesets.ts   # analyze samples (default 5); execute runs once per changeset
 *
 * Targets: analyze under 1 s, execute under 2 s on the 2-core machine.
 */
import { performance } from "node:perf_hooks";
import type { ActionContext } from "@/server/actions/context";
import { type ToolName, toolsByName } from "@/server/actions/registry";
import { runTool } from "@/server/actions/tool";
import { actorForUser } from "@/server/access/actor";
import { addUser } from "@/server/auth/accounts";
import { startServer } from "@/server/http/server";
import { loadConfig } from "@/server/config";
import { createObjectStore } from "@/server/storage";
import { scratchDatabase } from "./scratch-database";

const DOCUMENTS = 50;
const SECTIONS = 200;
const CHANGED_ON_SOURCE = 20;
const CHANGED_ON_TARGET = 5;
const RUNS = Number(process.env.BENCH_RUNS ?? 5);

const text = (t: string) => ({ blockType: "text" as const, text: t });

async function main() {
  const scratch = await scratchDatabase(`quire_bench_changesets_${Date.now()}`);
  const { db } = scratch.database;
  const server = await startServer({
    database: scratch.database,
    port: 0,
    host: "127.0.0.1",
    next: false,
    objectStore: createObjectStore(loadConfig()),
  });
  try {
    const created = await addUser(db, { email: "bench@example.test", name: "Bench", password: "correct horse battery" }, new Date());
    const actor = (await actorForUser(db, created.user.id, "person"))!;
    const ctx = { db, actor, clock: () => new Date(), files: server.files, live: server.live } as ActionContext;
    const call = async <T>(tool: ToolName, input: unknown) => (await runTool(toolsByName[tool], ctx, input)) as T;

    const setupStart = performance.now();
    for (let d = 0; d < DOCUMENTS; d++) {
      const doc = await call<{ documentId: string; sectionIds: string[] }>("documents", {
        action: "create",
        path: `bench/doc-${String(d).padStart(2, "0")}`,
        sections: Array.from({ length: SECTIONS }, (_, s) => ({
          name: `Section ${s}`,
          content: [text(`Document ${d}, section ${s}: the Widget.`)],
        })),
      });
      await call("documents", { action: "create_branch", documentId: doc.documentId, branchName: "rename" });
      const update = (branchName: string, s: number, t: string) =>
        call("sections", { action: "update", documentId: doc.documentId, branchName, sectionId: doc.sectionIds[s], newContent: [text(t)] });
      for (let c = 0; c < CHANGED_ON_SOURCE; c++) await update("rename", c * 10, `Document ${d}, section ${c * 10}: the Gadget.`);
      for (let c = 0; c < CHANGED_ON_TARGET; c++) await update("main", c * 10 + 5, `Document ${d}, section ${c * 10 + 5}: edited on main.`);
    }
    const setupSeconds = (performance.now() - setupStart) / 1000;

    const changeset = await call<{ changesetId: string; items: unknown[] }>("changesets", {
      action: "create",
      sourceBranch: "rename",
      targetBranch: "main",
      title: "Widget -> Gadget",
      pathPrefix: "bench/",
    });
    if (changeset.items.length !== DOCUMENTS) throw new Error(`gathered ${changeset.items.length} documents, expected ${DOCUMENTS}`);

    const analyzeTimes: number[] = [];
    let totals: unknown;
    for (let run = 0; run < RUNS + 1; run++) {
      const start = performance.now();
      const analysis = await call<{ totals: unknown }>("changesets", { action: "analyze", changesetId: changeset.changesetId });
      // The first run warms the caches and the JIT; it is not counted.
      if (run > 0) analyzeTimes.push(performance.now() - start);
      totals = analysis.totals;
    }
    const executeStart = performance.now();
    const executed = await call<{ merged: Array<{ fastForward: boolean }> }>("changesets", {
      action: "execute",
      changesetId: changeset.changesetId,
    });
    const executeMs = performance.now() - executeStart;

    analyzeTimes.sort((a, b) => a - b);
    const median = analyzeTimes[Math.floor(analyzeTimes.length / 2)]!;
    console.log(
      `setup: ${DOCUMENTS} documents x ${SECTIONS} sections, ${CHANGED_ON_SOURCE} changed on the source and ${CHANGED_ON_TARGET} on main each, in ${setupSeconds.toFixed(1)} s`,
    );
    console.log(`analyze totals: ${JSON.stringify(totals)}`);
    console.log(
      `analyze (${RUNS} runs): median ${median.toFixed(0)} ms, min ${analyzeTimes[0]!.toFixed(0)} ms, max ${analyzeTimes.at(-1)!.toFixed(0)} ms (target < 1000 ms)`,
    );
    console.log(
      `execute (1 run, ${executed.merged.length} items, ${executed.merged.filter((m) => !m.fastForward).length} merge commits): ${executeMs.toFixed(0)} ms (target < 2000 ms)`,
    );
  } finally {
    await server.close();
    await scratch.drop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
