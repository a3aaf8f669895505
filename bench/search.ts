/**
 * Full-text search at size (issue 24): 10,000 documents of 20 sections each
 * (200,000 sections of 40 words drawn from a 20,000-word vocabulary with a
 * Zipf distribution), indexed, then searched over MCP by an MCP SDK client
 * over HTTP against a started server. Targets: p50 < 50 ms, p99 < 200 ms.
 *
 *   npx tsx bench/search.ts
 *
 * Environment (all optional):
 *   DATABASE_URL           PostgreSQL server (default postgres://postgres@127.0.0.1:5432/postgres); the bench creates
 *                          and drops its own database quire_bench_search_* there
 *   BENCH_DOCUMENTS=10000  documents
 *   BENCH_SECTIONS=20      sections per document
 *   BENCH_QUERIES=400      measured searches (after 40 warm-up searches)
 *   BENCH_JSON=path        also write the results as JSON
 *   BENCH_DATABASE=name    keep the seeded corpus in this database: seeded and indexed on the first run, reused
 *                          (not seeded, not dropped) by the next ones; drop it yourself when done
 *
 * Seeding goes straight through the store (createDocument, four at a time),
 * not through the indexer, so the index is then built by `reindexAll` (what
 * `quire search reindex` runs), which is timed too. The queries are a fixed
 * mix drawn with a seeded generator: one word (ranks 200-20,000 of the
 * vocabulary: the 200 commonest behave like stop words), two words, a prefix
 * (the first five letters of a word, as typed into the palette), a quoted
 * two-word phrase, and a mistyped word (one letter changed). Each search
 * asks for the first 20 hits, with snippets, as the search page does.
 */
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import os from "node:os";
import { performance } from "node:perf_hooks";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { addUser, issueApiToken } from "@/server/auth/accounts";
import { loadConfig } from "@/server/config";
import { newSectionVersion } from "@/server/core/document-model";
import { startServer } from "@/server/http/server";
import { createObjectStore } from "@/server/storage";
import { createDocument } from "@/server/store/commit-to-branch";
import { queryRows } from "@/server/store/db";
import { reindexAll } from "@/server/store/search-index";
import { keptDatabase, scratchDatabase } from "./scratch-database";

const DOCUMENTS = Number(process.env.BENCH_DOCUMENTS ?? 10_000);
const SECTIONS = Number(process.env.BENCH_SECTIONS ?? 20);
const QUERIES = Number(process.env.BENCH_QUERIES ?? 400);
const WARMUP = 40;
const VOCABULARY = 20_000;
const WORDS_PER_SECTION = 40;

/** A seeded generator (mulberry32), so every run searches the same corpus for the same queries. */
function generator(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const random = generator(24);
const SYLLABLES =
  "ka lo mi ren tas vu bel dor fin gal hum jor kel lun mar nov pel quin ros sut tem vor wal yel zan bri cro dra fle gro pla".split(" ");

/** 20,000 distinct made-up words (so English stemming leaves most alone), commonest first. */
const vocabulary: string[] = (() => {
  const words = new Set<string>();
  while (words.size < VOCABULARY) {
    const length = 2 + Math.floor(random() * 3);
    let word = "";
    for (let i = 0; i < length; i++) word += SYLLABLES[Math.floor(random() * SYLLABLES.length)];
    words.add(word);
  }
  return [...words];
})();

/** Zipf (s = 1) over the vocabulary: rank r is drawn with weight 1/r. */
const cumulative = (() => {
  const weights = vocabulary.map((_, r) => 1 / (r + 1));
  const total = weights.reduce((a, b) => a + b, 0);
  let sum = 0;
  return weights.map((w) => (sum += w / total));
})();
function zipfWord(draw: () => number = random): string {
  const x = draw();
  let lo = 0;
  let hi = cumulative.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cumulative[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return vocabulary[lo]!;
}

function sectionText(): string {
  const words = Array.from({ length: WORDS_PER_SECTION }, zipfWord);
  // Some markdown, as real sections have: a heading, emphasis, a link.
  return `### ${words.slice(0, 3).join(" ")}\n\n${words.slice(3, 20).join(" ")} **${words[20]}** ${words.slice(21, 30).join(" ")}.\n\n- ${words.slice(30, 35).join(" ")}\n- [${words[35]}](https://example.com/${words[36]}) ${words.slice(37).join(" ")}`;
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

const QUERY_CLASSES = ["one word", "two words", "prefix", "phrase", "typo"] as const;

/**
 * The query mix, in QUERY_CLASSES order repeating: query i is of class i % 5. Drawn with a generator of its own, so a
 * run on a kept corpus (BENCH_DATABASE, no seeding) asks the same queries as a run that seeds.
 */
function queryMix(count: number): string[] {
  const random = generator(2_024);
  const rare = () => vocabulary[200 + Math.floor(random() * (VOCABULARY - 200))]!;
  const queries: string[] = [];
  for (let i = 0; i < count; i++) {
    switch (i % 5) {
      case 0:
        queries.push(rare());
        break;
      case 1:
        queries.push(`${rare()} ${zipfWord(random)}`);
        break;
      case 2:
        queries.push(rare().slice(0, 5));
        break;
      case 3:
        queries.push(`"${rare()} ${rare()}"`);
        break;
      default: {
        const word = rare();
        const at = 1 + Math.floor(random() * (word.length - 2));
        queries.push(`${word.slice(0, at)}${word[at] === "a" ? "e" : "a"}${word.slice(at + 1)}`);
      }
    }
  }
  return queries;
}

/** Seeds the corpus through the store and builds the index with `reindexAll` (timed), into the report. */
async function seedCorpus(
  db: Awaited<ReturnType<typeof scratchDatabase>>["database"]["db"],
  report: Record<string, unknown>,
  owner: { workspaceId: string; authorId: string },
): Promise<void> {
  let seeded = 0;
  const seedStarted = performance.now();
  const seedOne = async (n: number) => {
    const sections = Array.from({ length: SECTIONS }, (_, s) => ({
      sectionId: randomUUID(),
      version: newSectionVersion(`${zipfWord()} ${zipfWord()} ${s + 1}`, [{ blockType: "text", text: sectionText() }]),
    }));
    await db.transaction((tx) =>
      createDocument(
        tx,
        {
          documentId: randomUUID(),
          workspaceId: owner.workspaceId,
          authorId: owner.authorId,
          agent: null,
          path: `area-${n % 50}/${vocabulary[n % VOCABULARY]}-${n}`,
          name: `${zipfWord()} ${zipfWord()} ${n}`,
          description: null,
          message: "Seed",
          now: new Date(),
        },
        async () => sections,
      ),
    );
    seeded += 1;
    if (seeded % 1000 === 0) console.log(`  seeded ${seeded} documents (${((performance.now() - seedStarted) / 1000).toFixed(0)} s)`);
  };
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < DOCUMENTS) await seedOne(next++);
    }),
  );
  report.seedSeconds = (performance.now() - seedStarted) / 1000;

  const indexStarted = performance.now();
  const indexed = await reindexAll(db);
  report.reindexSeconds = (performance.now() - indexStarted) / 1000;
  report.indexedSections = indexed.sections;
  // A settled table, as autovacuum leaves one (hint bits set, pages all-visible), not one its first readers still write to.
  await db.execute(sql`vacuum analyze`);
  const [size] = await queryRows<{ bytes: string }>(
    db,
    sql`select (pg_total_relation_size('search_sections') + pg_total_relation_size('search_heads') + pg_total_relation_size('search_words'))::text as bytes`,
  );
  report.indexMegabytes = Math.round(Number(size?.bytes ?? 0) / 1e6);
  console.log(
    `seeded ${DOCUMENTS} documents × ${SECTIONS} sections in ${(report.seedSeconds as number).toFixed(0)} s; reindex ${indexed.branches} heads, ${indexed.sections} sections in ${(report.reindexSeconds as number).toFixed(1)} s; index ${report.indexMegabytes} MB`,
  );
}

async function main(): Promise<void> {
  const kept = process.env.BENCH_DATABASE;
  const scratch = kept
    ? await keptDatabase(kept)
    : { ...(await scratchDatabase(`quire_bench_search_${randomBytes(4).toString("hex")}`)), created: true };
  const { database } = scratch;
  const { db } = database;
  const report: Record<string, unknown> = { documents: DOCUMENTS, sectionsPerDocument: SECTIONS, at: new Date().toISOString() };
  console.log(`Search at size — ${report.at}`);
  console.log(
    `machine: ${os.cpus().length} × ${os.cpus()[0]?.model.trim()}, node ${process.version}; load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(" ")}`,
  );
  try {
    if (scratch.created) {
      const owner = await addUser(db, { email: "bench@example.test", name: "Bench Owner", password: "correct horse battery" }, new Date());
      await seedCorpus(db, report, { workspaceId: owner.workspaceId, authorId: owner.user.id });
    } else {
      const [held] = await queryRows<{ n: number }>(db, sql`select count(*)::int as n from documents`);
      if (held?.n !== DOCUMENTS)
        throw new Error(`BENCH_DATABASE ${kept} holds ${held?.n} documents, not ${DOCUMENTS}: drop it to seed again`);
      console.log(`reusing the corpus in ${kept} (${DOCUMENTS} documents)`);
    }
    const { token } = await issueApiToken(db, { email: "bench@example.test", label: "bench" }, new Date());

    const server = await startServer({ database, port: 0, host: "127.0.0.1", next: false, objectStore: createObjectStore(loadConfig()) });
    const client = new Client({ name: "quire-bench-search", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${server.url.replace("localhost", "127.0.0.1")}/api/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    try {
      const queries = queryMix(WARMUP + QUERIES);
      const times: number[] = [];
      const totals: number[] = [];
      const byClass = new Map<string, number[]>(QUERY_CLASSES.map((c) => [c, []]));
      for (const [i, query] of queries.entries()) {
        const started = performance.now();
        const result = await client.callTool({ name: "search", arguments: { query, limit: 20 } });
        const elapsed = performance.now() - started;
        if (result.isError) throw new Error(`search ${JSON.stringify(query)} failed: ${JSON.stringify(result.content)}`);
        if (i >= WARMUP) {
          times.push(elapsed);
          byClass.get(QUERY_CLASSES[i % 5]!)!.push(elapsed);
          totals.push((result.structuredContent as { total: number }).total);
        }
      }
      times.sort((a, b) => a - b);
      totals.sort((a, b) => a - b);
      report.search = {
        queries: QUERIES,
        p50: percentile(times, 50),
        p90: percentile(times, 90),
        p99: percentile(times, 99),
        max: times.at(-1),
        matchesP50: percentile(totals, 50),
        matchesP99: percentile(totals, 99),
        matchesMax: totals.at(-1),
      };
      const s = report.search as Record<string, number>;
      console.log(
        `search over MCP, ${QUERIES} queries: p50 ${s.p50!.toFixed(1)} ms, p90 ${s.p90!.toFixed(1)} ms, p99 ${s.p99!.toFixed(1)} ms, max ${s.max!.toFixed(1)} ms (targets p50 < 50, p99 < 200)`,
      );
      console.log(`  matches per query: p50 ${s.matchesP50}, p99 ${s.matchesP99}, max ${s.matchesMax}`);
      const classes: Record<string, { p50: number; p99: number }> = {};
      for (const [name, list] of byClass) {
        list.sort((a, b) => a - b);
        classes[name] = { p50: percentile(list, 50), p99: percentile(list, 99) };
        console.log(`  ${name}: p50 ${classes[name].p50.toFixed(1)} ms, p99 ${classes[name].p99.toFixed(1)} ms`);
      }
      report.byClass = classes;
      report.targetsMet = s.p50! < 50 && s.p99! < 200;
    } finally {
      await client.close();
      await server.close();
    }
    console.log(
      `load at end ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(" ")}`,
    );
    if (process.env.BENCH_JSON) writeFileSync(process.env.BENCH_JSON, JSON.stringify(report, null, 2));
  } finally {
    await scratch.drop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
