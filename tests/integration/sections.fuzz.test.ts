/**
 * Property-based tests of the `sections` tool (and parts of `documents` and
 * `read`) through a real MCP client, on PostgreSQL when TEST_DATABASE_URL /
 * DATABASE_URL is set, otherwise PGlite.
 *
 * 1. Fuzzing: random and malformed parameter objects (wrong types, missing and
 *    extra keys, huge and unicode strings, bogus ids, stale hashes, garbage
 *    blocks and comment markup). Every call must either succeed or fail with a
 *    known, non-INTERNAL DomainError code and a message; a failure changes
 *    nothing; a success leaves the document well formed with at most one new
 *    commit.
 * 2. A model-based test: random valid operations applied both to Quire and to
 *    an in-memory list of sections, compared after every step.
 *
 * Ids that only exist at run time (the document, its sections, their hashes,
 * references, comments) appear in generated values as `Sym` symbols and
 * are resolved against the current state right before each call, so each
 * property run is independent (a fresh document) and replays from its seed.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { text } from "../helpers/blocks";
import { sql } from "drizzle-orm";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { ERROR_CODES } from "@/server/core/errors";
import { queryRows } from "@/server/store/db";
import { callMcp, startTestServer, type TestServer, type TestUser } from "../helpers/server";
import { toolError } from "../helpers/tool-error";

/** Scales the number of runs (e.g. QUIRE_FUZZ_RUNS=5 for a long soak). */
const RUN_SCALE = Number(process.env.QUIRE_FUZZ_RUNS ?? "1") || 1;
const runs = (n: number) => Math.max(1, Math.round(n * RUN_SCALE));

let server: TestServer;
let owner: TestUser;
let member: TestUser;
let mcp: Client;
let otherDocumentId: string;
let otherSectionIds: string[];
let otherCommitId: string;
let documentCounter = 0;

interface SectionRead {
  sectionId: string;
  name: string;
  content: Array<Record<string, unknown>>;
  contentHash: string;
  position: number;
  references: Array<{ referenceId: string }>;
}
interface DocRead {
  headCommitId: string;
  deleted: boolean;
  sections: SectionRead[];
}
interface BranchInfo {
  name: string;
  headCommitId: string;
}
interface ToolResult {
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
  content?: unknown;
}

// ---------------------------------------------------------------------------
// Symbols, resolved against live state just before a call.
// ---------------------------------------------------------------------------

type SymKind =
  | "doc"
  | "otherDoc"
  | "otherSectionAsDoc"
  | "section"
  | "goneSection"
  | "otherSection"
  | "hash"
  | "hashOfTarget"
  | "hashUpper"
  | "otherSectionsHash"
  | "staleHash"
  | "ref"
  | "commentRaw"
  | "commentId"
  | "member"
  | "order"
  | "orderMissing"
  | "orderDuplicate"
  | "orderUnknown"
  | "orderForeign"
  | "head"
  | "firstCommit"
  | "otherCommit"
  | "idUpper";

class Sym {
  constructor(
    readonly kind: SymKind,
    readonly n = 0,
  ) {}
  [fc.toStringMethod](): string {
    return `Sym(${this.kind}${this.n ? `,${this.n}` : ""})`;
  }
}

/** A string built from literal parts and symbols (e.g. text around an existing comment tag). */
class Cat {
  constructor(readonly parts: Array<string | Sym>) {}
  [fc.toStringMethod](): string {
    return `Cat(${this.parts.map((p) => (typeof p === "string" ? JSON.stringify(p) : p[fc.toStringMethod]())).join(" + ")})`;
  }
}

const sym = (kind: SymKind) => fc.nat({ max: 7 }).map((n) => new Sym(kind, n));

/** State a call's symbols are resolved against. */
interface World {
  documentId: string;
  snapshot: Snapshot;
  /** Every section id and content hash seen on this document so far, in order. */
  seenSectionIds: string[];
  seenHashes: string[];
  commitIds: string[];
}

const FALLBACK_UUID = "5b0e6c1e-0f0f-4a4a-8b8b-000000000000";
const COMMENT_TAG = /<svc:comment id="([^"]*)">[\s\S]*?<\/svc:comment>/;

/** A deterministic permutation (Fisher-Yates over a small LCG). */
function permute<T>(items: readonly T[], seed: number): T[] {
  const out = [...items];
  let state = (seed * 2_654_435_761 + 1) >>> 0;
  for (let i = out.length - 1; i > 0; i--) {
    state = (state * 1_103_515_245 + 12_345) >>> 0;
    const j = state % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

function resolveSym(s: Sym, world: World, branch: string | undefined): unknown {
  const read = world.snapshot.reads[branch ?? "main"] ?? world.snapshot.reads.main!;
  const sections = read.sections;
  const at = <T>(list: readonly T[], fallback: T): T => (list.length === 0 ? fallback : list[s.n % list.length]!);
  const ids = sections.map((x) => x.sectionId);
  const comment = sections
    .flatMap((x) => x.content)
    .map((b) => (typeof b.text === "string" ? COMMENT_TAG.exec(b.text) : null))
    .find((m) => m);
  switch (s.kind) {
    case "doc":
      return world.documentId;
    case "otherDoc":
      return otherDocumentId;
    case "otherSectionAsDoc":
      return at(ids, FALLBACK_UUID);
    case "section":
      return at(ids, FALLBACK_UUID);
    case "idUpper":
      return at(ids, FALLBACK_UUID).toUpperCase();
    case "goneSection":
      return at(
        world.seenSectionIds.filter((id) => !ids.includes(id)),
        FALLBACK_UUID,
      );
    case "otherSection":
      return at(otherSectionIds, FALLBACK_UUID);
    case "hash":
      return at(sections, undefined)?.contentHash ?? "0".repeat(64);
    case "hashOfTarget":
      throw new Error("hashOfTarget is resolved with its parameter object");
    case "hashUpper":
      return (at(sections, undefined)?.contentHash ?? "a".repeat(64)).toUpperCase();
    case "otherSectionsHash":
      return at(sections, undefined) ? sections[(s.n + 1) % sections.length]!.contentHash : "1".repeat(64);
    case "staleHash": {
      const current = new Set(sections.map((x) => x.contentHash));
      return at(
        world.seenHashes.filter((h) => !current.has(h)),
        "f".repeat(64),
      );
    }
    case "ref":
      return at(
        sections.flatMap((x) => x.references.map((r) => r.referenceId)),
        FALLBACK_UUID,
      );
    case "commentRaw":
      return comment?.[0] ?? "";
    case "commentId":
      return comment?.[1] ?? FALLBACK_UUID;
    case "member":
      return member.userId;
    case "order":
      return permute(ids, s.n);
    case "orderMissing":
      return permute(ids, s.n).slice(1);
    case "orderDuplicate":
      return [...permute(ids, s.n), at(ids, FALLBACK_UUID)];
    case "orderUnknown":
      return [...permute(ids, s.n).slice(1), FALLBACK_UUID];
    case "orderForeign":
      return [...permute(ids, s.n), at(otherSectionIds, FALLBACK_UUID)];
    case "head":
      return read.headCommitId;
    case "firstCommit":
      return at(world.commitIds, FALLBACK_UUID);
    case "otherCommit":
      return otherCommitId;
  }
}

/** Replaces symbols with the ids and hashes of the current world. */
function resolve(value: unknown, world: World, branch: string | undefined): unknown {
  if (value instanceof Sym && value.kind !== "hashOfTarget") return resolve(resolveSym(value, world, branch), world, branch);
  if (value instanceof Cat) return value.parts.map((p) => (typeof p === "string" ? p : String(resolveSym(p, world, branch)))).join("");
  if (typeof value === "string") return value;
  if (Array.isArray(value)) return value.map((v) => resolve(v, world, branch));
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      Object.defineProperty(out, k, { value: resolve(v, world, branch), enumerable: true, configurable: true, writable: true });
    }
    // The current hash of the section this parameter object names (a correct optimistic lock).
    for (const [k, v] of Object.entries(value)) {
      if (v instanceof Sym && v.kind === "hashOfTarget") {
        const read = world.snapshot.reads[branch ?? "main"] ?? world.snapshot.reads.main!;
        out[k] = read.sections.find((x) => x.sectionId === out.sectionId)?.contentHash ?? "0".repeat(64);
      }
    }
    return out;
  }
  return value;
}

// ---------------------------------------------------------------------------
// Arbitraries: values that are valid, nearly valid, or garbage.
// ---------------------------------------------------------------------------

const garbage = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom<unknown>(null, true, false, 0, -1, 1.5, -0.5, 1e21, "", " ", [], {}, [[]], [{}], { a: 1 }),
);

const specialChars = fc.constantFrom(
  "\t",
  "\n",
  "\r\n",
  "\u0000",
  "\u0001",
  "\u001f",
  "\u007f",
  "\u200b",
  "\u200d",
  "\ufeff",
  "\u202e",
  "\ud800",
  "\udfff",
  "😀",
  "👩‍👩‍👧",
  "é",
  "é",
  "𝔘𝔫𝔦",
  "中文",
  "עברית",
  "\\",
  '"',
  "'",
  "<",
  "&amp;",
  "&quot;",
  "#",
  "## ",
  "---",
  "%",
  "_",
);

const wildString = fc
  .array(fc.oneof(fc.string({ unit: "grapheme", maxLength: 12 }), fc.string({ unit: "binary", maxLength: 6 }), specialChars), {
    maxLength: 6,
  })
  .map((parts) => parts.join(""));

/** Up to 100 KB. */
const hugeString = fc
  .tuple(fc.constantFrom("a", "é", "😀", " ", "## x\n", '<svc:comment-new body="b">', "\n"), fc.integer({ min: 10_000, max: 100_000 }))
  .map(([unit, n]) => unit.repeat(Math.ceil(n / unit.length)).slice(0, n));

const anyString = fc.oneof({ arbitrary: wildString, weight: 8 }, { arbitrary: hugeString, weight: 1 });

const validName = fc
  .oneof(
    fc.string({ unit: "grapheme", minLength: 1, maxLength: 30 }),
    fc.constantFrom("Intro", "  Padded  ", "Pricing", "x".repeat(300), "😀 Emoji", "Ünïcödé"),
  )
  .filter((s) => s.trim().length > 0 && !/[\u0000-\u001f\u007f]/.test(s));

const nameArb = fc.oneof(
  { arbitrary: validName, weight: 6 },
  { arbitrary: fc.constantFrom("", "   ", "x".repeat(301), "a\nb", "tab\there"), weight: 1 },
  { arbitrary: anyString, weight: 1 },
  { arbitrary: garbage, weight: 1 },
);

const uuidArb = fc.oneof(
  fc.uuid({ version: 4 }),
  fc.uuid(),
  fc.constantFrom("00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff", "00000000-0000-4000-8000-000000000000"),
);
const badUuid = fc.oneof(
  fc.constantFrom("", "nope", "123", "00000000-0000-0000-0000-00000000000g", "{00000000-0000-4000-8000-000000000000}"),
  fc.uuid().map((u) => ` ${u}`),
  fc.uuid().map((u) => u.replace(/-/g, "")),
  garbage,
);

const branchArb = fc.oneof(
  { arbitrary: fc.constant("main"), weight: 8 },
  { arbitrary: fc.constant("feature"), weight: 4 },
  {
    arbitrary: fc.constantFrom("nope", "feature/x", "Main", "main.lock", "../main", "a//b", "-x", "", " main", "x".repeat(201)),
    weight: 2,
  },
  { arbitrary: anyString, weight: 1 },
  { arbitrary: garbage, weight: 1 },
);

const sectionIdArb = fc.oneof(
  { arbitrary: sym("section"), weight: 10 },
  { arbitrary: sym("goneSection"), weight: 2 },
  { arbitrary: sym("otherSection"), weight: 1 },
  { arbitrary: sym("idUpper"), weight: 1 },
  { arbitrary: uuidArb, weight: 1 },
  { arbitrary: badUuid, weight: 1 },
);

const documentIdArb = fc.oneof(
  { arbitrary: sym("doc"), weight: 20 },
  { arbitrary: sym("otherSectionAsDoc"), weight: 1 },
  { arbitrary: uuidArb, weight: 1 },
  { arbitrary: badUuid, weight: 1 },
);

const hashArb = fc.oneof(
  { arbitrary: sym("hashOfTarget"), weight: 3 },
  { arbitrary: sym("hash"), weight: 2 },
  { arbitrary: sym("staleHash"), weight: 2 },
  { arbitrary: sym("otherSectionsHash"), weight: 1 },
  { arbitrary: sym("hashUpper"), weight: 1 },
  { arbitrary: fc.constantFrom("0".repeat(64), "0".repeat(63), "g".repeat(64), "", `sha256:${"0".repeat(64)}`), weight: 1 },
  { arbitrary: garbage, weight: 1 },
);

const positionArb = fc.oneof(
  fc.integer({ min: 0, max: 6 }),
  fc.integer({ min: -3, max: -1 }),
  fc.constantFrom<unknown>(1.5, -0.0001, 1e9, Number.MAX_SAFE_INTEGER, 2 ** 53 + 2, "1", null, [1], { n: 1 }),
);

const permissionArb = fc.oneof(
  fc.constantFrom<unknown>("edit", "read", "none", null),
  fc.constantFrom<unknown>("EDIT", "write", "", 1),
  garbage,
);

const commitMessageArb = fc.oneof(
  { arbitrary: validName, weight: 3 },
  { arbitrary: fc.constantFrom("", "   ", "m".repeat(1000), "m".repeat(1001), "multi\nline\nmessage"), weight: 1 },
  { arbitrary: anyString, weight: 1 },
  { arbitrary: garbage, weight: 1 },
);

/** Text with markdown, comment markup (valid, bogus, and around the existing comment), headings. */
const textArb: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: wildString, weight: 6 },
  { arbitrary: hugeString, weight: 1 },
  { arbitrary: fc.constantFrom("## Intro\nbody", "Intro\n-----\n", "  ##  intro  ##", "# Intro", "plain"), weight: 1 },
  {
    arbitrary: fc
      .tuple(
        wildString,
        fc.constantFrom("b", "", "  ", "x".repeat(10_001), "&quot;q&quot;"),
        fc.oneof(sym("member"), uuidArb, fc.constant("not-a-user"), fc.constant("")),
      )
      .map(([t, body, mention]) => new Cat(["a ", `<svc:comment-new body="${body}" mentions="`, mention, `">`, t, "</svc:comment-new> z"])),
    weight: 3,
  },
  { arbitrary: fc.tuple(wildString, wildString).map(([a, b]) => new Cat([a, new Sym("commentRaw"), b])), weight: 3 },
  {
    arbitrary: fc.constantFrom(
      "<svc:comment-new>x</svc:comment-new>",
      '<svc:comment-new body="b">unclosed',
      '<svc:comment-new body="b" color="red">x</svc:comment-new>',
      "</svc:comment>",
      "<svc:comment>x</svc:comment>",
      '<svc:comment id="">x</svc:comment>',
      '<svc:comment-new body="a" mentions=",,, ,">x</svc:comment-new>',
      '<svc:comment-new body="<svc:comment-new>">x</svc:comment-new>',
      '<svc:comment-new body="a"><svc:comment-new body="b">x</svc:comment-new></svc:comment-new>',
    ),
    weight: 2,
  },
  { arbitrary: sym("commentId").map((s) => new Cat(['<svc:comment id="', s, '">forged</svc:comment>'])), weight: 1 },
  { arbitrary: sym("commentRaw").map((s) => new Cat([s])), weight: 1 },
);

const urlArb = fc.oneof(
  fc.constantFrom(
    "https://example.com/a.png",
    "http://example.com/b.jpg",
    "ftp://example.com/a",
    "javascript:alert(1)",
    "not a url",
    "https://",
    "",
  ),
  fc.webUrl(),
);

const validBlock = fc.oneof(
  { arbitrary: textArb.map((t) => ({ blockType: "text", text: t })), weight: 8 },
  {
    arbitrary: fc.record(
      {
        blockType: fc.constant("image"),
        type: fc.constant("url"),
        mediaType: fc.constantFrom("image/png", "IMAGE/PNG", "image/svg+xml"),
        url: urlArb,
        alt: wildString,
      },
      { requiredKeys: ["blockType", "type", "mediaType", "url"] },
    ),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      blockType: fc.constant("image"),
      type: fc.constant("base64"),
      mediaType: fc.constant("image/png"),
      data: fc.base64String({ minLength: 4, maxLength: 40 }),
    }),
    weight: 1,
  },
  { arbitrary: fc.record({ blockType: fc.constant("database_embed"), databaseId: fc.oneof(uuidArb, badUuid) }), weight: 1 },
  {
    arbitrary: fc.record({
      blockType: fc.constant("document"),
      type: fc.constant("url"),
      mediaType: fc.constant("application/pdf"),
      url: urlArb,
      filename: wildString,
    }),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      blockType: fc.constant("csv"),
      type: fc.constant("storage"),
      mediaType: fc.constant("text/csv"),
      key: fc.constantFrom("ws/none.csv", "../../etc/passwd", ""),
      filename: fc.constant("a.csv"),
      headers: fc.array(wildString, { maxLength: 3 }),
      rowCount: fc.oneof(fc.nat(), fc.constant(-1), fc.constant(0.5)),
    }),
    weight: 1,
  },
  { arbitrary: fc.record({ blockType: fc.constant("image"), type: fc.constant("file"), path: fc.constant("/etc/passwd") }), weight: 1 },
);

/** Blocks with a field removed, an extra field, a wrong type or nested garbage. */
const brokenBlock = fc.oneof(
  fc.tuple(validBlock, fc.string({ maxLength: 10 }), garbage).map(([b, k, v]) => ({ ...(b as object), [k || "extra"]: v })),
  fc.tuple(validBlock, fc.nat()).map(([b, i]) => {
    const entries = Object.entries(b as object);
    entries.splice(i % entries.length, 1);
    return Object.fromEntries(entries);
  }),
  fc.tuple(validBlock, fc.nat(), garbage).map(([b, i, v]) => {
    const entries = Object.entries(b as object);
    entries[i % entries.length]![1] = v;
    return Object.fromEntries(entries);
  }),
  fc.constantFrom<unknown>(
    { blockType: "video", url: "https://x" },
    { blockType: "text", text: { nested: ["garbage"] } },
    { blockType: "text", text: ["a"] },
    { text: "no type" },
  ),
  garbage,
);

const contentArb: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.array(validBlock, { maxLength: 4 }), weight: 8 },
  { arbitrary: fc.array(fc.oneof(validBlock, brokenBlock), { minLength: 1, maxLength: 4 }), weight: 2 },
  { arbitrary: fc.constant(Array.from({ length: 2_001 }, () => text("x"))), weight: 1 },
  { arbitrary: garbage, weight: 1 },
);

const sectionSpecArb = fc.oneof(
  { arbitrary: fc.record({ name: nameArb, content: contentArb }), weight: 8 },
  { arbitrary: fc.record({ name: nameArb, content: contentArb }, { requiredKeys: [] }), weight: 1 },
  { arbitrary: fc.record({ name: validName, content: fc.array(validBlock, { maxLength: 2 }), position: fc.nat() }), weight: 1 },
  { arbitrary: garbage, weight: 1 },
);

const sectionsArb = fc.oneof(
  { arbitrary: fc.array(sectionSpecArb, { minLength: 1, maxLength: 5 }), weight: 8 },
  { arbitrary: fc.constant([]), weight: 1 },
  { arbitrary: fc.constant(Array.from({ length: 2_001 }, (_, i) => ({ name: `s${i}`, content: [] }))), weight: 1 },
  { arbitrary: garbage, weight: 1 },
);

const sectionOrderArb = fc.oneof(
  { arbitrary: sym("order"), weight: 6 },
  { arbitrary: fc.oneof(sym("orderMissing"), sym("orderDuplicate"), sym("orderUnknown"), sym("orderForeign")), weight: 4 },
  { arbitrary: fc.array(fc.oneof(sym("section"), uuidArb), { maxLength: 5 }), weight: 1 },
  { arbitrary: fc.array(badUuid, { minLength: 1, maxLength: 3 }), weight: 1 },
  { arbitrary: garbage, weight: 1 },
);

const displayTitleArb = fc.oneof(validName, fc.constantFrom<unknown>(null, "", "   ", "t".repeat(301)), anyString, garbage);
const targetDocumentArb = fc.oneof(
  { arbitrary: sym("otherDoc"), weight: 6 },
  { arbitrary: sym("doc"), weight: 2 },
  { arbitrary: uuidArb, weight: 1 },
  { arbitrary: badUuid, weight: 1 },
);
const targetSectionArb = fc.oneof(
  { arbitrary: sym("otherSection"), weight: 4 },
  { arbitrary: fc.constant(null), weight: 3 },
  { arbitrary: sym("section"), weight: 1 },
  { arbitrary: uuidArb, weight: 1 },
  { arbitrary: badUuid, weight: 1 },
);
const referenceIdArb = fc.oneof({ arbitrary: sym("ref"), weight: 6 }, { arbitrary: uuidArb, weight: 1 }, { arbitrary: badUuid, weight: 1 });

// Valid-only values: most calls are built from these so that a good share succeeds.
const safeText = fc.string({ unit: "grapheme", maxLength: 60 }).map((s) => s.replace(/</g, "‹"));
const validText: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: safeText, weight: 4 },
  { arbitrary: fc.tuple(safeText, safeText).map(([a, b]) => new Cat([a, new Sym("commentRaw"), b])), weight: 3 },
  {
    arbitrary: fc
      .tuple(safeText, fc.constantFrom("please check", "&quot;quoted&quot; &amp; more", "ünïcödé 😀"), fc.boolean())
      .map(
        ([t, body, mention]) =>
          new Cat([
            `<svc:comment-new body="${body}"`,
            ...(mention ? [' mentions="', new Sym("member"), '"'] : []),
            `>${t}</svc:comment-new>`,
          ]),
      ),
    weight: 1,
  },
);
const validOnlyBlock = fc.oneof(
  { arbitrary: validText.map((t) => ({ blockType: "text", text: t })), weight: 6 },
  {
    arbitrary: fc
      .nat(99)
      .map((n) => ({ blockType: "image", type: "url", mediaType: "image/png", url: `https://example.com/${n}.png`, alt: `alt ${n}` })),
    weight: 1,
  },
  {
    arbitrary: fc
      .base64String({ minLength: 4, maxLength: 40 })
      .map((data) => ({ blockType: "image", type: "base64", mediaType: "image/png", data })),
    weight: 1,
  },
  { arbitrary: fc.uuid({ version: 4 }).map((databaseId) => ({ blockType: "database_embed", databaseId })), weight: 1 },
  {
    arbitrary: fc.nat(99).map((n) => ({
      blockType: "document",
      type: "url",
      mediaType: "application/pdf",
      url: `https://example.com/${n}.pdf`,
      filename: `${n}.pdf`,
    })),
    weight: 1,
  },
);
const validContent = fc.array(validOnlyBlock, { maxLength: 3 });

/** A parameter: what a well-behaved caller sends (absent: never sent by one), and what anyone might send. */
interface Field {
  valid?: fc.Arbitrary<unknown>;
  any: fc.Arbitrary<unknown>;
}
const F = (valid: fc.Arbitrary<unknown> | undefined, fuzz: fc.Arbitrary<unknown>): Field => ({
  valid,
  any: valid ? fc.oneof({ arbitrary: valid, weight: 3 }, { arbitrary: fuzz, weight: 1 }) : fuzz,
});
type Fields = Record<string, Field>;

/**
 * An action's parameters: required fields always generated, optional ones
 * sometimes; 3 in 5 calls use well-behaved values only, the others mix in
 * malformed ones field by field.
 */
function actionArb(action: string, required: Fields, optional: Fields): fc.Arbitrary<Record<string, unknown>> {
  const pick = (fields: Fields, mode: "valid" | "any") =>
    Object.fromEntries(Object.entries(fields).flatMap(([k, f]) => (f[mode] ? [[k, f[mode]!]] : [])));
  const build = (mode: "valid" | "any") =>
    fc.record<Record<string, unknown>, string>(
      { action: fc.constant<unknown>(action), ...pick(required, mode), ...pick(optional, mode) },
      { requiredKeys: ["action", ...Object.keys(pick(required, mode))] },
    );
  return fc.oneof({ arbitrary: build("valid"), weight: 3 }, { arbitrary: build("any"), weight: 2 }) as fc.Arbitrary<
    Record<string, unknown>
  >;
}

const f = {
  documentId: F(sym("doc"), documentIdArb),
  branchName: F(fc.constantFrom("main", "main", "feature"), branchArb),
  sectionId: F(sym("section"), sectionIdArb),
  name: F(validName, nameArb),
  content: F(validContent, contentArb),
  position: F(fc.nat(6), positionArb),
  permission: F(fc.constantFrom("edit", "read", "none", null), permissionArb),
  commitMessage: F(validName, commitMessageArb),
  sections: F(fc.array(fc.record({ name: validName, content: validContent }), { minLength: 1, maxLength: 4 }), sectionsArb),
  expectedContentHash: F(sym("hashOfTarget"), hashArb),
  sectionOrder: F(sym("order"), sectionOrderArb),
  targetDocumentId: F(sym("otherDoc"), targetDocumentArb),
  targetSectionId: F(fc.oneof(sym("otherSection"), fc.constant(null)), targetSectionArb),
  displayTitle: F(fc.oneof(validName, fc.constant(null)), displayTitleArb),
  referenceId: F(sym("ref"), referenceIdArb),
};
const common = { documentId: f.documentId, branchName: f.branchName };
const sectionsActions = fc.oneof(
  actionArb(
    "create",
    { ...common, name: f.name, content: f.content },
    { position: f.position, defaultPermission: f.permission, aiAccess: f.permission, commitMessage: f.commitMessage },
  ),
  actionArb("batch_create", { ...common, sections: f.sections }, { commitMessage: f.commitMessage }),
  actionArb(
    "update",
    { ...common, sectionId: f.sectionId },
    {
      newName: f.name,
      newContent: f.content,
      content: F(undefined, contentArb),
      expectedContentHash: f.expectedContentHash,
      defaultPermission: f.permission,
      aiAccess: f.permission,
      commitMessage: f.commitMessage,
    },
  ),
  actionArb(
    "delete",
    { ...common, sectionId: f.sectionId },
    { expectedContentHash: f.expectedContentHash, commitMessage: f.commitMessage },
  ),
  actionArb("reorder", { ...common, sectionOrder: f.sectionOrder }, { commitMessage: f.commitMessage }),
  actionArb(
    "add_reference",
    { ...common, sectionId: f.sectionId, targetDocumentId: f.targetDocumentId },
    { targetSectionId: f.targetSectionId, displayTitle: f.displayTitle, commitMessage: f.commitMessage },
  ),
  actionArb("remove_reference", { ...common, referenceId: f.referenceId }, { commitMessage: f.commitMessage }),
);

const extraKeyArb = fc.oneof(
  fc.constantFrom(
    "Action",
    "documentID",
    "__proto__",
    "constructor",
    "toString",
    "sectionIds",
    "position",
    "newContent",
    "expectedContentHash",
    "",
  ),
  fc.string({ maxLength: 12 }),
);

/** Structural damage applied to otherwise generated parameters. */
const mutationArb = fc.oneof(
  { arbitrary: fc.constant({ kind: "none" as const }), weight: 12 },
  { arbitrary: fc.nat().map((i) => ({ kind: "drop" as const, i })), weight: 2 },
  { arbitrary: fc.tuple(extraKeyArb, garbage).map(([key, value]) => ({ kind: "extra" as const, key, value })), weight: 2 },
  { arbitrary: fc.tuple(fc.nat(), garbage).map(([i, value]) => ({ kind: "retype" as const, i, value })), weight: 2 },
  {
    arbitrary: fc
      .oneof(
        fc.constantFrom<unknown>(
          "create",
          "batch_create",
          "update",
          "delete",
          "reorder",
          "add_reference",
          "remove_reference",
          "merge",
          "CREATE",
          "",
        ),
        garbage,
      )
      .map((action) => ({ kind: "action" as const, action })),
    weight: 1,
  },
);
type Mutation = typeof mutationArb extends fc.Arbitrary<infer M> ? M : never;

function mutate(params: Record<string, unknown>, m: Mutation): Record<string, unknown> {
  const entries = Object.entries(params);
  switch (m.kind) {
    case "none":
      return params;
    case "drop":
      entries.splice(m.i % entries.length, 1);
      return Object.fromEntries(entries);
    case "extra": {
      const out = { ...params };
      Object.defineProperty(out, m.key, { value: m.value, enumerable: true, configurable: true, writable: true });
      return out;
    }
    case "retype":
      entries[m.i % entries.length]![1] = m.value;
      return Object.fromEntries(entries);
    case "action":
      return { ...params, action: m.action };
  }
}

const sectionsCallArb = fc.tuple(sectionsActions, mutationArb).map(([p, m]) => ({ tool: "sections" as const, args: mutate(p, m) }));

const readCallArb = fc
  .record(
    {
      documentId: documentIdArb,
      branchName: branchArb,
      commitId: fc.oneof(sym("head"), sym("firstCommit"), sym("otherCommit"), uuidArb, badUuid),
      sectionIds: fc.oneof(fc.array(fc.oneof(sym("section"), sym("goneSection"), uuidArb), { maxLength: 4 }), garbage),
    },
    { requiredKeys: ["documentId"] },
  )
  .chain((p) => mutationArb.map((m) => ({ tool: "read" as const, args: mutate(p as Record<string, unknown>, m) })));

const pathArb = fc.oneof(
  fc.nat().map((n) => `fuzz-created/${n}`),
  fc.constantFrom("/lead/slash", "a//b", "a/../b", "trailing/", " spaced ", "back\\slash", "", "x".repeat(501)),
  anyString,
  garbage,
);

const commitIdArb = F(fc.oneof(sym("firstCommit"), sym("head")), fc.oneof(sym("otherCommit"), uuidArb, badUuid));
const documentsActions = fc.oneof(
  actionArb("get", { documentId: f.documentId }, {}),
  actionArb("list_branches", { documentId: f.documentId }, {}),
  actionArb(
    "log",
    { documentId: f.documentId },
    {
      branchName: f.branchName,
      limit: F(fc.integer({ min: 1, max: 200 }), fc.oneof(fc.integer({ min: -1, max: 250 }), garbage)),
      cursor: F(undefined, fc.oneof(anyString, fc.constant("eyJmcm9udGllciI6W119"))),
    },
  ),
  actionArb("show", { documentId: f.documentId, commitId: commitIdArb }, {}),
  actionArb(
    "update",
    { ...common },
    {
      newPath: F(
        fc.nat().map((n) => `fuzz-moved/${n}`),
        pathArb,
      ),
      newName: f.name,
      newDescription: F(fc.oneof(safeText, fc.constant(null)), fc.oneof(anyString, garbage)),
      commitMessage: f.commitMessage,
    },
  ),
  actionArb(
    "create_branch",
    { documentId: f.documentId, branchName: F(fc.constantFrom("fresh", "agent/x", "feature"), branchArb) },
    { sourceBranch: f.branchName },
  ),
  actionArb("delete", { ...common }, { commitMessage: f.commitMessage }),
  actionArb("revert", { ...common, commitId: commitIdArb }, { commitMessage: f.commitMessage }),
  actionArb(
    "set_property",
    {
      ...common,
      columnId: F(fc.uuid({ version: 4 }), badUuid),
      value: F(fc.oneof(safeText, fc.integer(), fc.boolean(), fc.constant(null)), fc.oneof(anyString, fc.double(), garbage)),
    },
    { commitMessage: f.commitMessage },
  ),
  actionArb(
    "create",
    {
      path: F(
        fc.nat().map((n) => `fuzz-created/${n}`),
        pathArb,
      ),
    },
    {
      name: f.name,
      description: F(safeText, fc.oneof(anyString, garbage)),
      sections: F(fc.array(fc.record({ name: validName, content: validContent }), { maxLength: 3 }), garbage),
      commitMessage: f.commitMessage,
    },
  ),
);
const documentsCallArb = fc.tuple(documentsActions, mutationArb).map(([p, m]) => ({ tool: "documents" as const, args: mutate(p, m) }));

type FuzzCall = { tool: "sections" | "documents" | "read"; args: Record<string, unknown> };

// ---------------------------------------------------------------------------
// State snapshots and the checked call.
// ---------------------------------------------------------------------------

interface Snapshot {
  branches: BranchInfo[];
  reads: Record<string, DocRead>;
  /** Head generation (= log length on a linear history) and parents, per branch, from the database. */
  heads: Record<string, { generation: number; parentIds: string }>;
  counts: Record<string, number>;
}

async function snapshot(documentId: string): Promise<Snapshot> {
  const { branches } = await callMcp<{ branches: BranchInfo[] }>(mcp, "documents", { action: "list_branches", documentId });
  const reads: Record<string, DocRead> = {};
  for (const b of branches) reads[b.name] = await callMcp<DocRead>(mcp, "read", { documentId, branchName: b.name });
  const headRows = await queryRows<{ name: string; generation: number; parent_ids: string }>(
    server.db,
    sql`select b.name, c.generation, array_to_string(c.parent_ids, ',') as parent_ids
        from branches b join commits c on c.id = b.head_commit_id where b.document_id = ${documentId}`,
  );
  const [counts] = await queryRows<Record<string, number>>(
    server.db,
    sql`select (select count(*) from commits)::int as commits, (select count(*) from trees)::int as trees,
               (select count(*) from blobs)::int as blobs, (select count(*) from comments)::int as comments,
               (select count(*) from documents)::int as documents, (select count(*) from branches)::int as branches`,
  );
  return {
    branches,
    reads,
    heads: Object.fromEntries(headRows.map((r) => [r.name, { generation: Number(r.generation), parentIds: r.parent_ids }])),
    counts: counts!,
  };
}

function assertWellFormed(snap: Snapshot): void {
  for (const [branch, read] of Object.entries(snap.reads)) {
    const ids = read.sections.map((s) => s.sectionId);
    expect(new Set(ids).size, `unique section ids on ${branch}`).toBe(ids.length);
    expect(
      read.sections.map((s) => s.position),
      `positions on ${branch}`,
    ).toEqual(ids.map((_, i) => i));
    for (const s of read.sections) expect(s.contentHash).toMatch(/^[0-9a-f]{64}$/);
    expect(read.headCommitId).toBe(snap.branches.find((b) => b.name === branch)!.headCommitId);
  }
}

const stats = { ok: 0, failed: new Map<string, number>() };

/** Calls a tool and checks properties (a)-(c) against snapshots before and after. Returns the state after. */
async function checkedCall(world: World, call: FuzzCall): Promise<Snapshot> {
  const before = world.snapshot;
  const branch = typeof call.args.branchName === "string" ? call.args.branchName : undefined;
  const args = resolve(call.args, world, branch) as Record<string, unknown>;
  const result = (await mcp.callTool({ name: call.tool, arguments: args })) as ToolResult;
  const after = await snapshot(world.documentId);

  if (result.isError) {
    const error = toolError(result);
    stats.failed.set(String(error.code), (stats.failed.get(String(error.code)) ?? 0) + 1);
    // (a) a known code, never INTERNAL, with a message
    expect(ERROR_CODES, JSON.stringify(error).slice(0, 500)).toContain(error.code);
    expect(error.code, JSON.stringify(error).slice(0, 500)).not.toBe("INTERNAL");
    expect(typeof error.message === "string" && error.message.trim().length > 0).toBe(true);
    // (b) nothing changed
    expect(after).toEqual(before);
    return after;
  }

  stats.ok += 1;
  const structured = result.structuredContent!;
  const content = result.content as Array<{ type: string; text: string }>;
  expect(JSON.parse(content[0]!.text)).toEqual(structured);
  // (c) invariants on success
  assertWellFormed(after);
  const newCommits = after.counts.commits! - before.counts.commits!;
  expect(newCommits).toBeGreaterThanOrEqual(0);
  expect(newCommits).toBeLessThanOrEqual(1);
  if (call.tool === "read" || ["get", "list_branches", "log", "show"].includes(String(args.action))) {
    expect(after).toEqual(before);
  }
  for (const b of before.branches) {
    const moved = after.branches.find((x) => x.name === b.name)!;
    if (moved.headCommitId === b.headCommitId) continue;
    // Only the branch written to moves, by exactly one commit on top of its old head.
    expect(b.name).toBe(args.branchName);
    expect(after.heads[b.name]!.generation).toBe(before.heads[b.name]!.generation + 1);
    expect(after.heads[b.name]!.parentIds).toBe(b.headCommitId);
    expect(structured.commitId).toBe(moved.headCommitId);
    expect(structured.changed).toBe(true);
    const log = await callMcp<{ commits: Array<{ commitId: string }> }>(mcp, "documents", {
      action: "log",
      documentId: world.documentId,
      branchName: b.name,
      limit: 200,
    });
    expect(log.commits.length).toBe(after.heads[b.name]!.generation);
    expect(log.commits[0]!.commitId).toBe(moved.headCommitId);
    world.commitIds.push(moved.headCommitId);
  }
  if (structured.changed === false) expect(after.branches).toEqual(before.branches);
  for (const read of Object.values(after.reads)) {
    for (const s of read.sections) {
      if (!world.seenSectionIds.includes(s.sectionId)) world.seenSectionIds.push(s.sectionId);
      if (!world.seenHashes.includes(s.contentHash)) world.seenHashes.push(s.contentHash);
    }
  }
  return after;
}

/**
 * The SDK client's transport hands one AbortSignal to every fetch and Node's
 * fetch keeps a listener on it per request, so a long-lived client trips
 * MaxListenersExceededWarning after ~1500 calls: reconnect every few runs.
 */
let runsOnClient = 0;
async function freshClient(): Promise<void> {
  if (++runsOnClient < 15) return;
  await mcp.close();
  mcp = await server.mcpClient(owner.token);
  runsOnClient = 0;
}

/** A fresh document with three sections (one holding a comment), a reference, and a `feature` branch. */
async function freshWorld(): Promise<World> {
  await freshClient();
  documentCounter += 1;
  const created = await callMcp<{ documentId: string; sectionIds: string[]; commitId: string }>(mcp, "documents", {
    action: "create",
    path: `fuzz/doc-${documentCounter}`,
    sections: [
      { name: "Intro", content: [text(`Hello <svc:comment-new body="check" mentions="${member.userId}">world</svc:comment-new>.`)] },
      { name: "Empty", content: [] },
      {
        name: "Links",
        content: [text("see below"), { blockType: "image", type: "url", mediaType: "image/png", url: "https://example.com/a.png" }],
      },
    ],
  });
  const { documentId } = created;
  const ref = await callMcp<{ commitId: string }>(mcp, "sections", {
    action: "add_reference",
    documentId,
    branchName: "main",
    sectionId: created.sectionIds[2],
    targetDocumentId: otherDocumentId,
  });
  await callMcp(mcp, "documents", { action: "create_branch", documentId, branchName: "feature" });
  const snap = await snapshot(documentId);
  assertWellFormed(snap);
  return {
    documentId,
    snapshot: snap,
    seenSectionIds: snap.reads.main!.sections.map((s) => s.sectionId),
    seenHashes: [...new Set(Object.values(snap.reads).flatMap((r) => r.sections.map((s) => s.contentHash)))],
    commitIds: [created.commitId, ref.commitId],
  };
}

beforeAll(async () => {
  server = await startTestServer();
  owner = await server.createUser("owner@example.test", "Olive Owner");
  member = await server.createUser("member@example.test", "Mo Member");
  mcp = await server.mcpClient(owner.token);
  const other = await callMcp<{ documentId: string; sectionIds: string[]; commitId: string }>(mcp, "documents", {
    action: "create",
    path: "fuzz/other",
    sections: [
      { name: "Target A", content: [text("a")] },
      { name: "Target B", content: [] },
    ],
  });
  otherDocumentId = other.documentId;
  otherSectionIds = other.sectionIds;
  otherCommitId = other.commitId;
});

afterAll(async () => {
  if (stats.ok + stats.failed.size > 0) {
    console.log(`fuzz outcomes: ${stats.ok} ok; failures by code ${JSON.stringify(Object.fromEntries(stats.failed))}`);
  }
  await mcp?.close();
  await server?.close();
});

describe("fuzzing through MCP", () => {
  test("sections: every call succeeds cleanly or fails with a known code and changes nothing", { timeout: 120_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(sectionsCallArb, { minLength: 1, maxLength: 4 }), async (calls) => {
        const world = await freshWorld();
        for (const call of calls) world.snapshot = await checkedCall(world, call);
      }),
      { numRuns: runs(70) },
    );
  });

  test("documents and read mixed with sections: same properties", { timeout: 120_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            { arbitrary: documentsCallArb, weight: 3 },
            { arbitrary: readCallArb, weight: 2 },
            { arbitrary: sectionsCallArb, weight: 2 },
          ),
          {
            minLength: 1,
            maxLength: 4,
          },
        ),
        async (calls) => {
          const world = await freshWorld();
          for (const call of calls) world.snapshot = await checkedCall(world, call);
        },
      ),
      { numRuns: runs(35) },
    );
  });

  test("arguments that are not an object, and unknown tools, over raw JSON-RPC: never a 5xx or INTERNAL", async () => {
    const post = async (body: string) => {
      const response = await fetch(`${server.url}/api/mcp`, {
        method: "POST",
        headers: {
          accept: "application/json, text/event-stream",
          "content-type": "application/json",
          authorization: `Bearer ${owner.token}`,
        },
        body,
      });
      expect(response.status).toBeLessThan(500);
      const text = await response.text();
      return { status: response.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : null };
    };
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.jsonValue({ maxDepth: 3 }).filter((v) => v === null || typeof v !== "object" || Array.isArray(v)),
          fc.constantFrom<unknown>([], [{ action: "create" }], "create", 42, null),
        ),
        fc.constantFrom("sections", "documents", "read", "nope", "__proto__", ""),
        async (args, name) => {
          const { json } = await post(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } }));
          const result = json?.result as ToolResult | undefined;
          if (result) {
            expect(result.isError).toBe(true);
            const { code } = toolError(result);
            expect(ERROR_CODES).toContain(code);
            expect(code).not.toBe("INTERNAL");
          } else {
            expect(json?.error).toBeDefined();
          }
        },
      ),
      { numRuns: runs(40) },
    );
    for (const body of [
      "{",
      "[]",
      "null",
      '{"jsonrpc":"2.0","id":1,"method":"tools/call"}',
      '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sections","arguments":{"action":"create"}}}',
    ]) {
      await post(body);
    }
  });
});

// ---------------------------------------------------------------------------
// Model-based: random valid operations against an in-memory section list.
// ---------------------------------------------------------------------------

type Block = Record<string, unknown>;
interface ModelSection {
  sectionId: string;
  name: string;
  content: Block[];
  contentHash: string;
  /** Hashes this section had before, for stale-hash checks. */
  previousHashes: string[];
}
interface Model {
  sections: ModelSection[];
  /** Commits on main = log length. */
  commits: number;
}
interface Real {
  documentId: string;
}

const modelName = fc
  .string({ unit: "grapheme", minLength: 1, maxLength: 16 })
  .chain((s) => fc.constantFrom(s, ` ${s}`, `${s}  `))
  .filter((s) => s.trim().length > 0 && !/[\u0000-\u001f\u007f]/.test(s) && !s.trim().toLowerCase().startsWith("text"));
const modelText = fc.string({ unit: "grapheme", maxLength: 40 }).map((s) => `text: ${s.replace(/</g, "‹")}`);
const modelBlock: fc.Arbitrary<Block> = fc.oneof(
  { arbitrary: modelText.map((t) => ({ blockType: "text", text: t })), weight: 6 },
  { arbitrary: fc.uuid({ version: 4 }).map((id) => ({ blockType: "database_embed", databaseId: id })), weight: 1 },
  {
    arbitrary: fc.nat(99).map((n) => ({ blockType: "image", type: "url", mediaType: "image/png", url: `https://example.com/${n}.png` })),
    weight: 1,
  },
);
const modelContent = fc.array(modelBlock, { maxLength: 3 });
const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

async function verifyModel(model: Model, real: Real): Promise<void> {
  const doc = await callMcp<DocRead>(mcp, "read", { documentId: real.documentId, branchName: "main" });
  expect(
    doc.sections.map((s) => ({
      sectionId: s.sectionId,
      name: s.name,
      content: s.content,
      contentHash: s.contentHash,
      position: s.position,
    })),
  ).toEqual(
    model.sections.map((s, position) => ({
      sectionId: s.sectionId,
      name: s.name,
      content: s.content,
      contentHash: s.contentHash,
      position,
    })),
  );
  const log = await callMcp<{ commits: unknown[] }>(mcp, "documents", { action: "log", documentId: real.documentId, limit: 200 });
  expect(log.commits).toHaveLength(model.commits);
}

type Cmd = fc.AsyncCommand<Model, Real>;
interface WriteResultShape {
  changed: boolean;
  commitId: string;
}

class CreateCommand implements Cmd {
  constructor(
    readonly name: string,
    readonly content: Block[],
    readonly at: number | null,
  ) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const position = this.at === null ? undefined : this.at % (m.sections.length + 1);
    const res = await callMcp<WriteResultShape & { sectionId: string; contentHash: string; position: number }>(mcp, "sections", {
      action: "create",
      documentId: r.documentId,
      branchName: "main",
      name: this.name,
      content: this.content,
      ...(position === undefined ? {} : { position }),
    });
    expect(res.position).toBe(position ?? m.sections.length);
    expect(res.changed).toBe(true);
    m.sections.splice(res.position, 0, {
      sectionId: res.sectionId,
      name: this.name.trim(),
      content: this.content,
      contentHash: res.contentHash,
      previousHashes: [],
    });
    m.commits += 1;
    await verifyModel(m, r);
  }
  toString = () => `create(${JSON.stringify(this.name)}, ${JSON.stringify(this.content)}, at=${this.at})`;
}

class BatchCreateCommand implements Cmd {
  constructor(readonly specs: Array<{ name: string; content: Block[] }>) {}
  check = () => true;
  async run(m: Model, r: Real) {
    const res = await callMcp<WriteResultShape & { sectionIds: string[]; contentHashes: string[]; positions: number[] }>(mcp, "sections", {
      action: "batch_create",
      documentId: r.documentId,
      branchName: "main",
      sections: this.specs,
    });
    expect(res.positions).toEqual(this.specs.map((_, i) => m.sections.length + i));
    this.specs.forEach((spec, i) => {
      m.sections.push({
        sectionId: res.sectionIds[i]!,
        name: spec.name.trim(),
        content: spec.content,
        contentHash: res.contentHashes[i]!,
        previousHashes: [],
      });
    });
    m.commits += 1;
    await verifyModel(m, r);
  }
  toString = () => `batch_create(${JSON.stringify(this.specs)})`;
}

class UpdateCommand implements Cmd {
  constructor(
    readonly pick: number,
    readonly newName: string | null,
    readonly newContent: Block[] | null,
    readonly withHash: boolean,
  ) {}
  check = (m: Readonly<Model>) => m.sections.length > 0 && (this.newName !== null || this.newContent !== null);
  async run(m: Model, r: Real) {
    const index = this.pick % m.sections.length;
    const section = m.sections[index]!;
    const res = await callMcp<WriteResultShape & { sectionId: string; name: string; contentHash: string; position: number }>(
      mcp,
      "sections",
      {
        action: "update",
        documentId: r.documentId,
        branchName: "main",
        sectionId: section.sectionId,
        ...(this.newName === null ? {} : { newName: this.newName }),
        ...(this.newContent === null ? {} : { newContent: this.newContent }),
        ...(this.withHash ? { expectedContentHash: section.contentHash } : {}),
      },
    );
    const name = this.newName === null ? section.name : this.newName.trim();
    const content = this.newContent ?? section.content;
    const changed = name !== section.name || !sameJson(content, section.content);
    expect(res).toMatchObject({ sectionId: section.sectionId, name, position: index, changed });
    expect(res.contentHash === section.contentHash).toBe(!changed);
    if (changed) {
      m.sections[index] = {
        ...section,
        name,
        content,
        contentHash: res.contentHash,
        previousHashes: [...section.previousHashes, section.contentHash],
      };
      m.commits += 1;
    }
    await verifyModel(m, r);
  }
  toString = () =>
    `update(#${this.pick}, name=${JSON.stringify(this.newName)}, content=${JSON.stringify(this.newContent)}, hash=${this.withHash})`;
}

class StaleUpdateCommand implements Cmd {
  constructor(readonly pick: number) {}
  check = (m: Readonly<Model>) => m.sections.some((s) => s.previousHashes.some((h) => h !== s.contentHash));
  async run(m: Model, r: Real) {
    const candidates = m.sections.filter((s) => s.previousHashes.some((h) => h !== s.contentHash));
    const section = candidates[this.pick % candidates.length]!;
    const stale = section.previousHashes.find((h) => h !== section.contentHash)!;
    const result = (await mcp.callTool({
      name: "sections",
      arguments: {
        action: "update",
        documentId: r.documentId,
        branchName: "main",
        sectionId: section.sectionId,
        newContent: [text("text: lost")],
        expectedContentHash: stale,
      },
    })) as ToolResult;
    expect(toolError(result)).toMatchObject({ code: "CONTENT_HASH_MISMATCH", details: { currentContentHash: section.contentHash } });
    await verifyModel(m, r);
  }
  toString = () => `staleUpdate(#${this.pick})`;
}

class DeleteCommand implements Cmd {
  constructor(
    readonly pick: number,
    readonly withHash: boolean,
  ) {}
  check = (m: Readonly<Model>) => m.sections.length > 0;
  async run(m: Model, r: Real) {
    const index = this.pick % m.sections.length;
    const section = m.sections[index]!;
    const res = await callMcp<WriteResultShape>(mcp, "sections", {
      action: "delete",
      documentId: r.documentId,
      branchName: "main",
      sectionId: section.sectionId,
      ...(this.withHash ? { expectedContentHash: section.contentHash } : {}),
    });
    expect(res.changed).toBe(true);
    m.sections.splice(index, 1);
    m.commits += 1;
    await verifyModel(m, r);
  }
  toString = () => `delete(#${this.pick}, hash=${this.withHash})`;
}

class ReorderCommand implements Cmd {
  constructor(readonly seed: number) {}
  check = (m: Readonly<Model>) => m.sections.length > 0;
  async run(m: Model, r: Real) {
    const next = permute(m.sections, this.seed);
    const changed = next.some((s, i) => s !== m.sections[i]);
    const res = await callMcp<WriteResultShape & { sectionOrder: string[] }>(mcp, "sections", {
      action: "reorder",
      documentId: r.documentId,
      branchName: "main",
      sectionOrder: next.map((s) => s.sectionId),
    });
    expect(res.changed).toBe(changed);
    expect(res.sectionOrder).toEqual(next.map((s) => s.sectionId));
    m.sections = next;
    if (changed) m.commits += 1;
    await verifyModel(m, r);
  }
  toString = () => `reorder(seed=${this.seed})`;
}

describe("model-based", () => {
  test("random valid operations keep `read` equal to an in-memory model", { timeout: 120_000 }, async () => {
    const commands = [
      fc.tuple(modelName, modelContent, fc.option(fc.nat(20))).map(([n, c, at]) => new CreateCommand(n, c, at)),
      fc
        .array(fc.record({ name: modelName, content: modelContent }), { minLength: 1, maxLength: 4 })
        .map((specs) => new BatchCreateCommand(specs)),
      fc.tuple(fc.nat(), fc.option(modelName), fc.option(modelContent), fc.boolean()).map(([p, n, c, h]) => new UpdateCommand(p, n, c, h)),
      fc.nat().map((p) => new StaleUpdateCommand(p)),
      fc.tuple(fc.nat(), fc.boolean()).map(([p, h]) => new DeleteCommand(p, h)),
      fc.nat().map((s) => new ReorderCommand(s)),
    ];
    await fc.assert(
      fc.asyncProperty(fc.commands(commands, { maxCommands: 15 }), async (cmds) => {
        await freshClient();
        documentCounter += 1;
        const created = await callMcp<{ documentId: string; sectionIds: string[] }>(mcp, "documents", {
          action: "create",
          path: `model/doc-${documentCounter}`,
          sections: [{ name: "First", content: [text("text: one")] }],
        });
        const first = (await callMcp<DocRead>(mcp, "read", { documentId: created.documentId })).sections[0]!;
        const model: Model = {
          sections: [
            { sectionId: first.sectionId, name: "First", content: [text("text: one")], contentHash: first.contentHash, previousHashes: [] },
          ],
          commits: 1,
        };
        await fc.asyncModelRun(() => ({ model, real: { documentId: created.documentId } }), cmds);
      }),
      { numRuns: runs(25) },
    );
  });
});

// ---------------------------------------------------------------------------
// Found by this fuzzing: NUL and lone surrogates used to reach the database
// (or the hasher), and unparseable URLs made a zod refinement throw — all came
// back as INTERNAL. Each stays here as a regression test.
// ---------------------------------------------------------------------------

describe("unstorable characters and unparseable URLs", () => {
  const cases: Array<[string, (documentId: string, sectionId: string) => [string, Record<string, unknown>]]> = [
    [
      "NUL in a text block",
      (documentId, sectionId) => [
        "sections",
        { action: "update", documentId, branchName: "main", sectionId, newContent: [text("a\u0000b")] },
      ],
    ],
    [
      "a lone surrogate in a text block",
      (documentId, sectionId) => [
        "sections",
        { action: "update", documentId, branchName: "main", sectionId, newContent: [text("a\ud800b")] },
      ],
    ],
    [
      "a lone surrogate in a section name",
      (documentId) => ["sections", { action: "create", documentId, branchName: "main", name: "N\udc00", content: [] }],
    ],
    [
      "NUL in commitMessage",
      (documentId, sectionId) => [
        "sections",
        { action: "update", documentId, branchName: "main", sectionId, newName: "Renamed", commitMessage: "a\u0000b" },
      ],
    ],
    [
      "NUL in image alt text",
      (documentId, sectionId) => [
        "sections",
        {
          action: "update",
          documentId,
          branchName: "main",
          sectionId,
          newContent: [{ blockType: "image", type: "url", mediaType: "image/png", url: "https://example.com/a.png", alt: "\u0000" }],
        },
      ],
    ],
    ["a lone surrogate in a document path", () => ["documents", { action: "create", path: "p\ud800" }]],
    [
      "an unparseable URL in an image block",
      (documentId) => [
        "sections",
        {
          action: "create",
          documentId,
          branchName: "main",
          name: "Img",
          content: [{ blockType: "image", type: "url", mediaType: "image/png", url: "not a url" }],
        },
      ],
    ],
    [
      "an empty URL in a document block",
      (documentId) => [
        "sections",
        {
          action: "create",
          documentId,
          branchName: "main",
          name: "Doc",
          content: [{ blockType: "document", type: "url", mediaType: "application/pdf", url: "", filename: "a.pdf" }],
        },
      ],
    ],
  ];
  for (const [label, build] of cases) {
    test(`${label} is VALIDATION_FAILED, not INTERNAL`, async () => {
      const world = await freshWorld();
      const [tool, args] = build(world.documentId, world.snapshot.reads.main!.sections[1]!.sectionId);
      const result = (await mcp.callTool({ name: tool, arguments: args })) as ToolResult;
      expect(toolError(result).code).toBe("VALIDATION_FAILED");
    });
  }
});
