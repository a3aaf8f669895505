/**
 * The live fuzzer (issue 22): survival, not only agreement. Seeded random
 * operations against two real Quire processes on one PostgreSQL and one
 * Redis: y-websocket clients typing into sections (markdown, comment markup,
 * pastes near the 1,000,000-character limit, deletions, invalid content that
 * must be refused), clients dropping and reconnecting, MCP writers (update,
 * create, reorder, delete, permission overrides merged from a branch,
 * commit and discard of the draft, merges from a side branch, reverts),
 * graceful restarts and kill -9 of either process.
 *
 * Every edit carries a unique marker. A live edit is acknowledged once a
 * client on the other process has it (updates cross processes only once
 * stored), an MCP edit once the call succeeded; edits the scenario removes on
 * purpose (discard, section delete, a deleted range, a revert that drops the
 * section) are recorded as deliberately deleted. At the end every client
 * converges, every surviving marker is in the draft or in a commit of its
 * branch, the draft loaded after a restart equals the live state before it,
 * the draft holds only valid blocks, and no frame or MCP answer a principal
 * received holds text of a section hidden from it.
 *
 * Choices are deterministic given the seed (`createRng`); timing is not (the
 * order in which the server interleaves clients, Redis and PostgreSQL), so a
 * replay (QUIRE_FUZZ_SEED=<n>) makes the same operations, not necessarily the
 * same interleaving.
 */
import { writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { encode } from "next-auth/jwt";
import * as Y from "yjs";
import { addUser, issueApiToken } from "@/server/auth/accounts";
import { sessionCookieName } from "@/server/auth/web-session";
import { blockSchema } from "@/server/core/blocks";
import { connectLive, type LiveClient, roomName, waitFor } from "./collab";
import { createTestDatabase, type TestDatabase } from "./database";
import { createRng, type Rng } from "./fuzz-rng";
import { type QuireProcess, portOf, startQuireProcess } from "./quire-process";
import { type McpToolError, toolError } from "./tool-error";

/** What tests/helpers/quire-process.ts gives every process as NEXTAUTH_SECRET: session cookies are signed with it. */
const PROCESS_AUTH_SECRET = "test-secret-of-the-live-collaboration-suite";
const MAX_TEXT_BLOCK_CHARS = 1_000_000;
/** Room kept under the block limit for edits after a big paste (live typing and merged API writes). */
const LIMIT_MARGIN = 5_000;
const ACK_TIMEOUT_MS = 15_000;
/** How often peersAbsorbed reads the draft again while a peer differs from it. */
const DRAFT_REREAD_MS = 250;
/** Close codes the server uses for a refused live update (invalid content) and an oversized message. */
const CLOSE_INVALID = 4400;
const CLOSE_TOO_BIG = 1009;

type Principal = "ownerAgent" | "memberAgent" | "ownerPerson";
type Permission = "edit" | "read" | "none";

interface SectionModel {
  sectionId: string;
  kind: "plain" | "teamSecret" | "aiSecret";
  defaultPermission: Permission | null;
  aiAccess: Permission | null;
}

interface Marker {
  text: string;
  branch: string;
  sectionId: string;
  via: "live" | "mcp";
  state: "pending" | "acked" | "deleted";
  /** In a commit of its branch (then history holds it whatever happens to the draft). */
  committed: boolean;
  why?: string;
  /** The operation that made it. */
  step: number;
}

interface Peer {
  id: number;
  principal: Principal;
  processIndex: number;
  /** null: the branch outline. */
  sectionId: string | null;
  live: LiveClient;
  closeCodes: number[];
  /** Why the server closed it, as its close frames said. */
  closeReasons: string[];
  /** Frames already checked for hidden text. */
  checkedFrames: number;
}

export interface FuzzCounts {
  operations: Record<string, number>;
  /** How the server answered invalid live content: `4400`, `1009`, or `accepted` (the behaviour before the fix). */
  invalid: Record<string, number>;
  markersAcknowledged: number;
  markersDeleted: number;
  markersVerified: number;
  framesChecked: number;
  restarts: number;
  kills: number;
}

/** The processes, database and principals shared by every seed of a run. */
export interface FuzzWorld {
  database: TestDatabase;
  redisUrl: string;
  processes: QuireProcess[];
  ports: number[];
  ownerId: string;
  memberId: string;
  tokens: { owner: string; member: string };
  ownerCookie: string;
  close(): Promise<void>;
}

export async function createFuzzWorld(redisUrl: string): Promise<FuzzWorld> {
  const database = await createTestDatabase();
  const now = new Date();
  const owner = await addUser(database.db, { email: "owner@fuzz.test", name: "Olive Owner", password: "correct horse battery" }, now);
  const member = await addUser(database.db, { email: "member@fuzz.test", name: "Mo Member", password: "correct horse battery" }, now);
  const ownerToken = (await issueApiToken(database.db, { email: "owner@fuzz.test", label: "fuzz" }, now)).token;
  const memberToken = (await issueApiToken(database.db, { email: "member@fuzz.test", label: "fuzz" }, now)).token;
  const session = await encode({ token: { sub: owner.user.id }, secret: PROCESS_AUTH_SECRET });
  const processes = await Promise.all([0, 1].map(() => startQuireProcess({ databaseUrl: database.url!, redisUrl })));
  return {
    database,
    redisUrl,
    processes,
    ports: processes.map((p) => portOf(p.url)),
    ownerId: owner.user.id,
    memberId: member.user.id,
    tokens: { owner: ownerToken, member: memberToken },
    ownerCookie: `${sessionCookieName(false)}=${session}`,
    async close() {
      for (const p of processes) await p.stop("SIGTERM");
      await database.close();
    },
  };
}

export class FuzzFailure extends Error {}

const OPERATION_WEIGHTS = {
  liveInsert: 30,
  liveDelete: 6,
  livePaste: 1,
  invalidLive: 5,
  flap: 4,
  replacePeer: 3,
  mcpUpdate: 8,
  mcpCreate: 3,
  mcpReorder: 3,
  mcpDelete: 2,
  setOverrides: 3,
  commit: 4,
  discard: 2,
  sideWrite: 4,
  merge: 2,
  revert: 1.5,
  mcpRead: 4,
} as const;
type OperationKind = keyof typeof OPERATION_WEIGHTS | "restart" | "kill";

/** Exit listeners a seed's peers may hold at once (11 at set-up, a few more while one is replaced). */
const PEER_LISTENERS_AT_MOST = 32;

const INVALID_KINDS = ["nul", "longName", "unknownBlock", "csvHeadersString", "javascriptImage", "foreignAuthor", "oversize"] as const;

/** Runs one seed: a fresh document, `operations` random operations, then the final invariants. Throws FuzzFailure with the seed and log tail. */
export async function runFuzzSeed(world: FuzzWorld, seed: number, operations: number, counts: FuzzCounts): Promise<void> {
  const run = new SeedRun(world, seed, counts);
  try {
    await run.setUp();
    const schedule = run.rng.fork("schedule");
    // Each seed restarts one process and kills one (kill -9), at chosen steps; long runs add more.
    const restartAt = new Set([schedule.int(1, operations - 1), ...extraSteps(schedule, operations)]);
    const killAt = new Set([schedule.int(1, operations - 1), ...extraSteps(schedule, operations)]);
    for (let step = 0; step < operations; step++) {
      await run.checkFrames();
      if (restartAt.has(step)) await run.operate("restart");
      if (killAt.has(step)) await run.operate("kill");
      await run.operate(run.rng.weighted(OPERATION_WEIGHTS));
    }
    await run.finish();
  } catch (error) {
    const tail = run.opLog.slice(-40).join("\n");
    // The whole log beside the tail, for reducing a failure by hand.
    const logFile = path.join(os.tmpdir(), `quire-fuzz-seed-${seed}.log`);
    await writeFile(logFile, run.opLog.join("\n"));
    const message = `live fuzzer failed: seed ${seed} (replay: QUIRE_FUZZ_SEED=${seed})\n${(error as Error).stack ?? error}\n--- last operations (all of them: ${logFile}) ---\n${tail}`;
    throw new FuzzFailure(message);
  } finally {
    run.closeAll();
  }
}

/** One more restart (or kill) per 60 operations beyond the first 60. */
function extraSteps(rng: Rng, operations: number): number[] {
  return Array.from({ length: Math.floor((operations - 1) / 60) }, () => rng.int(1, operations - 1));
}

interface McpOk<T> {
  ok: true;
  value: T;
}
interface McpRefused {
  ok: false;
  code: string;
  message: string;
  details?: Record<string, unknown>;
}

interface ReadSection {
  sectionId: string;
  name: string;
  content: Array<Record<string, unknown>>;
  contentHash: string;
  defaultPermission: Permission | null;
  aiAccess: Permission | null;
}
interface ReadResult {
  headCommitId: string;
  sections: ReadSection[];
}

class SeedRun {
  readonly rng: Rng;
  readonly opLog: string[] = [];
  private documentId = "";
  private sections: SectionModel[] = [];
  private readonly markers = new Map<string, Marker>();
  private markerCount = 0;
  private readonly peers: Peer[] = [];
  private peerCount = 0;
  private readonly mcp = new Map<string, Client>();
  /** Per principal, per section hidden from it: the texts it must never receive. */
  private readonly hidden: Record<"ownerAgent" | "memberAgent", Map<string, Set<string>>> = {
    ownerAgent: new Map(),
    memberAgent: new Map(),
  };
  /** Commits on main made after the setup (revert targets: earlier ones predate the secret sections' overrides). */
  private readonly revertTargets: string[] = [];
  private sideDirty = false;
  private branchCount = 0;
  private step = 0;

  constructor(
    private readonly world: FuzzWorld,
    readonly seed: number,
    private readonly counts: FuzzCounts,
  ) {
    this.rng = createRng(seed);
  }

  private log(line: string): void {
    this.opLog.push(`[${this.step}] ${line}`);
  }

  private url(processIndex: number): string {
    return this.world.processes[processIndex]!.url;
  }

  // -------------------------------------------------------------------------
  // Faces: MCP (validated against each tool's output schema), tRPC as the owner in person.
  // -------------------------------------------------------------------------

  private async mcpClient(principal: "ownerAgent" | "memberAgent", processIndex: number): Promise<Client> {
    const key = `${principal}@${processIndex}`;
    const open = this.mcp.get(key);
    if (open) return open;
    const token = principal === "ownerAgent" ? this.world.tokens.owner : this.world.tokens.member;
    const client = new Client({ name: "quire-live-fuzz", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${this.url(processIndex)}/api/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${token}` } },
      }),
    );
    // tools/list fills the client's output validators: from here on every structuredContent is checked against its tool's schema.
    await client.listTools();
    this.mcp.set(key, client);
    return client;
  }

  /** Calls a tool over MCP; a refusal is returned, a protocol or output-schema failure throws. Answers to agents are checked for hidden text. */
  private async call<T>(
    principal: "ownerAgent" | "memberAgent",
    tool: string,
    args: Record<string, unknown>,
  ): Promise<McpOk<T> | McpRefused> {
    const client = await this.mcpClient(principal, this.rng.int(0, 1));
    const result = await client.callTool({ name: tool, arguments: args });
    const answer = result.isError ? toolError(result) : result.structuredContent;
    this.assertNoHiddenText(principal, JSON.stringify(answer), `MCP ${tool} ${String(args.action ?? "")} answer`);
    if (result.isError) {
      const error = answer as McpToolError;
      return { ok: false, code: error.code, message: error.message, details: error.details };
    }
    return { ok: true, value: answer as T };
  }

  private async must<T>(principal: "ownerAgent" | "memberAgent", tool: string, args: Record<string, unknown>): Promise<T> {
    const answer = await this.call<T>(principal, tool, args);
    if (!answer.ok) throw new Error(`MCP ${tool} ${String(args.action)} refused: ${answer.code} ${answer.message}`);
    return answer.value;
  }

  /** The owner in person (a session cookie), who sees every section: tRPC. */
  private async person<T>(tool: string, input: Record<string, unknown>): Promise<T> {
    // tRPC names procedures in camelCase (`mergeRequests`), MCP tools in snake_case.
    const procedure = tool.replace(/_(\w)/g, (_, c: string) => c.toUpperCase());
    const base = `${this.url(this.rng.int(0, 1))}/api/trpc/${procedure}`;
    const headers = { cookie: this.world.ownerCookie, "content-type": "application/json" };
    const response =
      tool === "read"
        ? await fetch(`${base}?input=${encodeURIComponent(JSON.stringify(input))}`, { headers })
        : await fetch(base, { method: "POST", headers, body: JSON.stringify(input) });
    const body = (await response.json()) as { result?: { data: T }; error?: unknown };
    if (!body.result) throw new Error(`tRPC ${tool} ${String(input.action ?? "")} failed: ${JSON.stringify(body.error)}`);
    return body.result.data;
  }

  // -------------------------------------------------------------------------
  // The model.
  // -------------------------------------------------------------------------

  private nextMarkerText(): string {
    this.markerCount += 1;
    return `⟦s${this.seed}-${this.markerCount}⟧`;
  }

  private newMarker(sectionId: string, branch: string, via: Marker["via"], text = this.nextMarkerText()): Marker {
    const marker: Marker = { text, branch, sectionId, via, state: "pending", committed: false, step: this.step };
    this.markers.set(marker.text, marker);
    if (branch === "main") this.hideFromThoseWhoCannotSee(sectionId, marker.text);
    return marker;
  }

  private hideFromThoseWhoCannotSee(sectionId: string, text: string): void {
    for (const principal of ["ownerAgent", "memberAgent"] as const) {
      if (this.access(principal, sectionId) !== "none") continue;
      const set = this.hidden[principal].get(sectionId) ?? new Set();
      set.add(text);
      this.hidden[principal].set(sectionId, set);
    }
  }

  private acknowledge(marker: Marker, committed: boolean): void {
    if (marker.state === "pending") {
      marker.state = "acked";
      this.counts.markersAcknowledged += 1;
    }
    if (committed) marker.committed = true;
  }

  private deleteMarkers(which: (m: Marker) => boolean, why: string): number {
    let n = 0;
    for (const m of this.markers.values()) {
      if (m.state === "deleted" || !which(m)) continue;
      m.state = "deleted";
      m.why = why;
      this.counts.markersDeleted += 1;
      n++;
    }
    return n;
  }

  private section(sectionId: string): SectionModel | undefined {
    return this.sections.find((s) => s.sectionId === sectionId);
  }

  /** What a principal may do in a section on main (README "Access"): the owner's agent is a manager capped by aiAccess; the member's default is the document's edit. */
  private access(principal: Principal, sectionId: string): Permission {
    const s = this.section(sectionId);
    if (!s) return "none";
    if (principal === "ownerPerson") return "edit";
    const cap = s.aiAccess ?? "edit";
    const team = principal === "ownerAgent" ? "edit" : (s.defaultPermission ?? "edit");
    const rank = { none: 0, read: 1, edit: 2 } as const;
    return rank[cap] < rank[team] ? cap : team;
  }

  private plainSections(): SectionModel[] {
    return this.sections.filter((s) => s.kind === "plain");
  }

  /** Brings the model to main's head as the owner in person sees it; sections that left it take their markers with them (only `allowGone` operations may remove one). */
  private async refresh(allowGone: string | null): Promise<void> {
    const read = await this.person<ReadResult>("read", { documentId: this.documentId, branchName: "main" });
    const before = new Map(this.sections.map((s) => [s.sectionId, s]));
    const wasHidden = (principal: "ownerAgent" | "memberAgent", id: string) => this.access(principal, id) === "none";
    const hiddenBefore = new Map(
      [...before.keys()].map((id) => [id, { ownerAgent: wasHidden("ownerAgent", id), memberAgent: wasHidden("memberAgent", id) }]),
    );
    this.sections = read.sections.map((s) => ({
      sectionId: s.sectionId,
      kind: before.get(s.sectionId)?.kind ?? "plain",
      defaultPermission: s.defaultPermission,
      aiAccess: s.aiAccess,
    }));
    for (const id of before.keys()) {
      if (this.section(id)) continue;
      if (!allowGone) throw new Error(`section ${id} left main, though no operation removed it`);
      const n = this.deleteMarkers((m) => m.branch === "main" && m.sectionId === id, allowGone);
      this.log(`  section ${id.slice(0, 8)} left main (${allowGone}): ${n} markers deliberately deleted`);
    }
    await this.checkFrames();
    for (const [id, was] of hiddenBefore) {
      for (const principal of ["ownerAgent", "memberAgent"] as const) {
        // Shown again: what it holds may now reach this principal (frames received until now were checked above).
        if (was[principal] && this.section(id) && !wasHidden(principal, id)) this.hidden[principal].delete(id);
      }
    }
    for (const peer of [...this.peers]) {
      if (peer.sectionId && this.access(peer.principal, peer.sectionId) === "none") {
        this.log(`  peer ${peer.id} (${peer.principal}) loses section ${peer.sectionId.slice(0, 8)}`);
        this.dropPeer(peer);
      }
    }
  }

  // -------------------------------------------------------------------------
  // Peers.
  // -------------------------------------------------------------------------

  private credentials(principal: Principal): { params: Record<string, string>; headers?: Record<string, string> } {
    if (principal === "ownerPerson") return { params: {}, headers: { cookie: this.world.ownerCookie } };
    return { params: { token: principal === "ownerAgent" ? this.world.tokens.owner : this.world.tokens.member } };
  }

  private async connect(principal: Principal, processIndex: number, sectionId: string | null): Promise<Peer> {
    const { params, headers } = this.credentials(principal);
    const room = roomName(this.documentId, "main", sectionId ?? undefined);
    // The first sync waited for here, not in connectLive (5 s): a loaded 2-core box (npm test's other files beside it) can take longer.
    const live = await connectLive(this.url(processIndex), room, params, { headers, sync: false });
    await waitFor(() => live.provider.synced, ACK_TIMEOUT_MS, `sync of ${room}`).catch((error: Error) => {
      live.close();
      throw error;
    });
    this.peerCount += 1;
    const peer: Peer = { id: this.peerCount, principal, processIndex, sectionId, live, closeCodes: [], closeReasons: [], checkedFrames: 0 };
    live.provider.on("connection-close", (event: { code: number; reason: string } | null) => {
      if (!event) return;
      peer.closeCodes.push(event.code);
      peer.closeReasons.push(`${event.code} ${event.reason}`);
    });
    this.peers.push(peer);
    return peer;
  }

  private dropPeer(peer: Peer): void {
    this.scanFrames(peer);
    peer.live.close();
    this.peers.splice(this.peers.indexOf(peer), 1);
  }

  private sectionPeers(sectionId: string): Peer[] {
    return this.peers.filter((p) => p.sectionId === sectionId);
  }

  /** The text blocks of a peer's section, as its shared texts. */
  private texts(peer: Peer): Y.Text[] {
    const blocks = peer.live.doc.getMap("section").get("blocks") as Y.Array<Y.Map<unknown>> | undefined;
    return (blocks?.toArray() ?? []).map((b) => b.get("text")).filter((t): t is Y.Text => t instanceof Y.Text);
  }

  /** The section as JSON with each block's fields in one order (a Y.Map's own order is its insertion history's). */
  private sectionJson(peer: Peer): string {
    const { name, content } = peer.live.section();
    return JSON.stringify({ name, content: content.map(sortedFields) });
  }

  /** Waits until a client connected to the other process has `has(text)` for the author's section: the edit crossed processes, so it is stored. */
  private async seenElsewhere(author: Peer, has: (json: string) => boolean, what: string): Promise<void> {
    const sectionId = author.sectionId!;
    const other = 1 - author.processIndex;
    const closesBefore = author.closeCodes.length;
    let watcher = this.peers.find((p) => p.sectionId === sectionId && p.processIndex === other && p.live.provider.wsconnected);
    let temporary: Peer | null = null;
    if (!watcher) {
      const principal: Principal = this.section(sectionId)?.kind === "aiSecret" ? "ownerPerson" : "ownerAgent";
      temporary = await this.connect(principal, other, sectionId);
      watcher = temporary;
    }
    try {
      const w = watcher;
      const refused = () => author.closeCodes.slice(closesBefore).some((code) => code >= 4400 && code < 4500);
      await waitFor(() => refused() || has(this.sectionJson(w)), ACK_TIMEOUT_MS, `${what} on process ${other}`).catch(
        async (error: Error) => {
          throw new Error(`${error.message} (peer ${w.id}); ${await this.diagnose(sectionId, has)}`);
        },
      );
      if (refused()) throw new Error(`${what}: the server closed peer ${author.id}'s socket: ${author.closeReasons.at(-1)}`);
    } finally {
      if (temporary) this.dropPeer(temporary);
    }
  }

  /** Where an edit that did not cross processes is: whether a fresh client of either process (loaded from storage, or from that process's open room) shows it (`has`). */
  private async diagnose(sectionId: string, has: (json: string) => boolean): Promise<string> {
    const seen: string[] = [];
    for (const processIndex of [0, 1]) {
      const principal: Principal = this.section(sectionId)?.kind === "aiSecret" ? "ownerPerson" : "ownerAgent";
      const fresh = await this.connect(principal, processIndex, sectionId);
      seen.push(`a fresh client on process ${processIndex} ${has(this.sectionJson(fresh)) ? "shows it" : "does not show it"}`);
      this.dropPeer(fresh);
    }
    return seen.join(", ");
  }

  /** A peer that may edit its section, connected. */
  private editingPeer(filter: (p: Peer) => boolean = () => true): Peer | undefined {
    const candidates = this.peers.filter(
      (p) => p.sectionId !== null && p.live.provider.wsconnected && this.access(p.principal, p.sectionId) === "edit" && filter(p),
    );
    return candidates.length > 0 ? this.rng.pick(candidates) : undefined;
  }

  // -------------------------------------------------------------------------
  // Set-up.
  // -------------------------------------------------------------------------

  async setUp(): Promise<void> {
    // Each y-websocket provider in Node listens for this process's exit (to tell its room it left), and a seed holds 11 or
    // more peers at once: over Node's leak warning at 10 listeners. Not a leak: a peer's provider goes when it closes.
    process.setMaxListeners(Math.max(process.getMaxListeners(), PEER_LISTENERS_AT_MOST));
    const text = (t: string) => ({ blockType: "text", text: t });
    const created = await this.must<{ documentId: string; sectionIds: string[] }>("ownerAgent", "documents", {
      action: "create",
      path: `fuzz/seed-${this.seed}-${Date.now()}`,
      sections: [
        { name: "Plain one", content: [text("The first section.")] },
        { name: "Plain two", content: [text("Second, with **markdown**.")] },
        { name: "Plain three", content: [text("Third.")] },
        { name: `Team secret TEAMSECRET${this.seed}name`, content: [text(`TEAMSECRET${this.seed}text`)] },
        { name: `AI secret AISECRET${this.seed}name`, content: [text(`AISECRET${this.seed}text`)] },
      ],
    });
    this.documentId = created.documentId;
    const [one, two, three, team, ai] = created.sectionIds as [string, string, string, string, string];
    this.log(`document ${this.documentId}`);
    // The secret sections' overrides, merged to main in person (an agent may not set what hides a section from itself).
    await this.person("documents", { action: "create_branch", documentId: this.documentId, branchName: "setup" });
    for (const [sectionId, overrides] of [
      [team, { defaultPermission: "none" }],
      [ai, { aiAccess: "none" }],
    ] as const) {
      await this.person("sections", { action: "update", documentId: this.documentId, branchName: "setup", sectionId, ...overrides });
    }
    await this.mergeInPerson("setup");
    await this.must("ownerAgent", "documents", { action: "create_branch", documentId: this.documentId, branchName: "side" });
    this.sections = [];
    await this.refresh(null);
    this.section(team)!.kind = "teamSecret";
    this.section(ai)!.kind = "aiSecret";
    for (const principal of ["ownerAgent", "memberAgent"] as const) {
      for (const secret of [team, ai]) {
        if (this.access(principal, secret) !== "none") continue;
        const kind = secret === team ? "TEAMSECRET" : "AISECRET";
        // Its id, its name and its text: none of it may reach this principal.
        this.hidden[principal].set(secret, new Set([secret, `${kind}${this.seed}name`, `${kind}${this.seed}text`]));
      }
    }
    for (const sectionId of [one, two, three]) {
      await this.connect("ownerAgent", 0, sectionId);
      await this.connect("memberAgent", 1, sectionId);
    }
    await this.connect("ownerAgent", 1, team);
    await this.connect("ownerPerson", 0, ai);
    await this.connect("memberAgent", 0, null);
    await this.connect("memberAgent", 1, null);
    await this.connect("ownerAgent", 1, null);
  }

  private async mergeInPerson(branchName: string): Promise<void> {
    const request = await this.person<{ mergeRequestId: string }>("merge_requests", {
      action: "create",
      documentId: this.documentId,
      sourceBranch: branchName,
      targetBranch: "main",
      title: `Merge ${branchName}`,
    });
    await this.person("merge_requests", { action: "execute", mergeRequestId: request.mergeRequestId });
  }

  // -------------------------------------------------------------------------
  // Operations.
  // -------------------------------------------------------------------------

  async operate(kind: OperationKind): Promise<void> {
    this.step += 1;
    this.counts.operations[kind] = (this.counts.operations[kind] ?? 0) + 1;
    const ran = await this[kind]();
    this.log(`${kind}: ${ran}`);
  }

  /** Where an insert may go in `text`: not inside a marker, a comment element or a surrogate pair. */
  private safePosition(text: string): number {
    const spans = protectedSpans(text);
    let position = this.rng.int(0, text.length);
    for (const [start, end] of spans) if (position > start && position < end) position = end;
    if (position > 0 && position < text.length && isHighSurrogate(text.charCodeAt(position - 1))) position += 1;
    return position;
  }

  private liveSnippet(marker: string, typist: Principal): string {
    const author = typist === "memberAgent" ? this.world.memberId : this.world.ownerId;
    switch (this.rng.pick(["plain", "markdown", "comment", "unicode", "lines"] as const)) {
      case "plain":
        return ` typed ${marker} `;
      case "markdown":
        return `\n\n### Note ${marker}\n\n- **bold** _it_ [link](https://example.com/${this.markerCount})\n`;
      case "comment":
        // A comment typed live names its typist as author (the live face credits it at commit).
        return `<svc:comment-new body="about ${this.markerCount}" author="${author}"${this.rng.chance(0.5) ? ` mentions="${this.world.ownerId}"` : ""}>${marker} commented</svc:comment-new>`;
      case "unicode":
        return ` héllo 🎉 ${marker} مرحبا `;
      case "lines":
        return `\n${marker}\n`;
    }
  }

  private async liveInsert(): Promise<string> {
    const peer = this.editingPeer();
    if (!peer) return "no peer may edit";
    const targets = this.texts(peer);
    if (targets.length === 0) return "no text block";
    const index = this.rng.int(0, targets.length - 1);
    const target = targets[index]!;
    if (target.length + 500 > MAX_TEXT_BLOCK_CHARS - LIMIT_MARGIN) return "block full";
    const marker = this.newMarker(peer.sectionId!, "main", "live");
    const snippet = this.liveSnippet(marker.text, peer.principal);
    const at = this.safePosition(target.toString());
    target.insert(at, snippet);
    this.log(
      `  peer ${peer.id} (${peer.principal}@${peer.processIndex}) in ${peer.sectionId!.slice(0, 8)} block ${index} at ${at}: ${JSON.stringify(snippet)}`,
    );
    await this.seenElsewhere(peer, (json) => json.includes(marker.text), `live insert ${marker.text}`);
    this.acknowledge(marker, false);
    return marker.text;
  }

  private async livePaste(): Promise<string> {
    const peer = this.editingPeer((p) => this.section(p.sectionId!)?.kind === "plain");
    if (!peer) return "no peer may edit";
    const target = this.rng.pick(this.texts(peer));
    if (!target || target.length > 10_000) return "no small block";
    const marker = this.newMarker(peer.sectionId!, "main", "live");
    const filler = MAX_TEXT_BLOCK_CHARS - LIMIT_MARGIN - target.length - marker.text.length;
    const half = Math.floor(filler / 2);
    const paste = `${"pasted words ".repeat(Math.ceil(half / 13)).slice(0, half)}${marker.text}${"x".repeat(filler - half)}`;
    target.insert(this.safePosition(target.toString()), paste);
    await this.seenElsewhere(peer, (json) => json.includes(marker.text), `paste ${marker.text}`);
    this.acknowledge(marker, false);
    return `peer ${peer.id} pasted ${paste.length} characters (${marker.text})`;
  }

  private async liveDelete(): Promise<string> {
    const peer = this.editingPeer();
    if (!peer) return "no peer may edit";
    const target = this.rng.pick(this.texts(peer));
    if (!target || target.length === 0) return "empty block";
    const text = target.toString();
    const long = this.rng.chance(0.1);
    let start = this.rng.int(0, text.length - 1);
    let end = Math.min(text.length, start + this.rng.int(1, long ? 100_000 : 40));
    // Within one stretch between comment elements (cutting into one changes or breaks it), covering whole markers and surrogate pairs.
    for (const [tagStart, tagEnd] of commentSpans(text)) {
      if (tagEnd <= start) continue;
      if (tagStart <= start) start = tagEnd;
      else end = Math.min(end, tagStart);
    }
    for (const [mStart, mEnd] of markerSpans(text)) {
      if (mStart < end && mEnd > start) {
        start = Math.min(start, mStart);
        end = Math.max(end, mEnd);
      }
    }
    if (start > 0 && isHighSurrogate(text.charCodeAt(start - 1))) start -= 1;
    if (end < text.length && end > 0 && isHighSurrogate(text.charCodeAt(end - 1))) end += 1;
    if (end <= start) return "nothing deletable there";
    const covered = [...text.slice(start, end).matchAll(MARKER)].map((m) => m[0]);
    // A marker may stand elsewhere in the section too (`sections create` puts it in the name and the text): what the
    // deletion leaves of it is what the section held minus what the range covered, and only a marker left nowhere is gone.
    const before = this.sectionJson(peer);
    const left = new Map(covered.map((m) => [m, occurrences(before, m) - occurrences(covered.join(""), m)]));
    const deleted = this.deleteMarkers((m) => left.get(m.text) === 0, "delete-range");
    target.delete(start, end - start);
    this.log(
      `  peer ${peer.id} (${peer.principal}@${peer.processIndex}) in ${peer.sectionId!.slice(0, 8)} deleted [${start}, ${end}) covering ${covered.join(" ") || "no marker"}`,
    );
    const sample = covered[0];
    if (sample) {
      const expected = left.get(sample)!;
      await this.seenElsewhere(peer, (json) => occurrences(json, sample) === expected, `deletion of ${sample} (${expected} left)`);
    }
    return `peer ${peer.id} deleted [${start}, ${end}) covering ${covered.length} markers, ${deleted} now deleted`;
  }

  /** Invalid content from a fresh client: refused (4400 with the reverting change, or 1009) or, before that fix, accepted and cleaned up here. */
  private async invalidLive(): Promise<string> {
    const kind = this.rng.pick(INVALID_KINDS);
    const principal: Principal = kind === "foreignAuthor" ? "memberAgent" : "ownerAgent";
    const candidates = this.plainSections().filter((s) => this.access(principal, s.sectionId) === "edit");
    if (candidates.length === 0) return `${kind}: no section ${principal} may edit`;
    const sectionId = this.rng.pick(candidates).sectionId;
    const processIndex = this.rng.int(0, 1);
    const vandal = await this.connect(principal, processIndex, sectionId);
    const root = vandal.live.doc.getMap("section");
    const blocks = root.get("blocks") as Y.Array<Y.Map<unknown>>;
    const firstText = this.texts(vandal)[0];
    const name = root.get("name") as Y.Text;
    const oldName = name.toString();
    const badBlock = (fields: Record<string, unknown>) => {
      const map = new Y.Map<unknown>();
      for (const [k, v] of Object.entries(fields)) map.set(k, v);
      blocks.push([map]);
    };
    const probe = `BAD${this.seed}x${this.step}`;
    let present: (json: string) => boolean;
    let undo: () => void;
    switch (kind) {
      case "nul":
      case "foreignAuthor":
      case "oversize": {
        if (!firstText) {
          this.dropPeer(vandal);
          return `${kind}: no text block`;
        }
        const inserted =
          kind === "nul"
            ? `${probe}\u0000`
            : kind === "foreignAuthor"
              ? `<svc:comment-new body="${probe}" author="${this.world.ownerId}">forged</svc:comment-new>`
              : `${probe}${"o".repeat(4.3 * 1024 * 1024)}`;
        const at = this.safePosition(firstText.toString());
        firstText.insert(at, inserted);
        present = (json) => json.includes(probe);
        undo = () => {
          const now = firstText.toString().indexOf(probe);
          const opening = kind === "foreignAuthor" ? now - '<svc:comment-new body="'.length : now;
          if (now >= 0) firstText.delete(opening, inserted.length);
        };
        break;
      }
      case "longName":
        name.insert(name.length, ` ${probe}${"n".repeat(320)}`);
        present = (json) => json.includes(probe);
        undo = () => {
          name.delete(0, name.length);
          name.insert(0, oldName);
        };
        break;
      case "unknownBlock":
      case "csvHeadersString":
      case "javascriptImage": {
        const fields =
          kind === "unknownBlock"
            ? { blockType: "spreadsheet", text: probe }
            : kind === "csvHeadersString"
              ? {
                  blockType: "csv",
                  type: "storage",
                  mediaType: "text/csv",
                  key: `uploads/${probe}.csv`,
                  filename: "x.csv",
                  headers: probe,
                  rowCount: 1,
                }
              : { blockType: "image", type: "url", mediaType: "image/png", url: `javascript:alert("${probe}")` };
        badBlock(fields);
        present = (json) => json.includes(probe);
        undo = () => {
          const index = blocks.toArray().findIndex((b) => JSON.stringify(b.toJSON()).includes(probe));
          if (index >= 0) blocks.delete(index, 1);
        };
        break;
      }
    }
    const refused = () => vandal.closeCodes.some((c) => c === CLOSE_INVALID || c === CLOSE_TOO_BIG);
    let accepted = false;
    const other = 1 - processIndex;
    const existing = this.peers.find((p) => p.sectionId === sectionId && p.processIndex === other && p.live.provider.wsconnected);
    const watcher = existing ?? (await this.connect("ownerAgent", other, sectionId));
    const started = Date.now();
    await waitFor(
      () => {
        accepted = accepted || present(this.sectionJson(watcher));
        return refused() || accepted;
      },
      ACK_TIMEOUT_MS,
      `refusal or acceptance of ${kind}`,
    );
    let outcome: string;
    if (refused()) {
      outcome = String(vandal.closeCodes.find((c) => c === CLOSE_INVALID || c === CLOSE_TOO_BIG));
      // Refused means never part of the draft: no other client may keep it, and a 4400 comes with the change undoing it.
      await new Promise((r) => setTimeout(r, 300));
      if (present(this.sectionJson(watcher))) throw new Error(`${kind} was refused (${outcome}) but another client holds it`);
      if (outcome === String(CLOSE_INVALID) && present(this.sectionJson(vandal))) {
        throw new Error(`${kind} was refused with ${outcome} but the reverting change never reached its sender`);
      }
    } else {
      outcome = "accepted";
      undo();
      await waitFor(() => !present(this.sectionJson(watcher)), ACK_TIMEOUT_MS, `clean-up of accepted ${kind}`);
    }
    this.counts.invalid[outcome] = (this.counts.invalid[outcome] ?? 0) + 1;
    this.dropPeer(vandal);
    if (!existing) this.dropPeer(watcher);
    return `${kind} by ${principal}@${processIndex} in ${sectionId.slice(0, 8)}: ${outcome} after ${Date.now() - started} ms`;
  }

  /** A client drops its connection, maybe types while offline, and reconnects: it hands its edits over. */
  private async flap(): Promise<string> {
    const peer = this.rng.chance(0.7) ? this.editingPeer() : this.rng.pick(this.peers);
    if (!peer) return "no peer";
    peer.live.provider.disconnect();
    let typed: Marker | null = null;
    const texts = this.texts(peer);
    if (peer.sectionId && this.access(peer.principal, peer.sectionId) === "edit" && texts.length > 0 && this.rng.chance(0.6)) {
      const target = this.rng.pick(texts);
      // A block near its limit takes nothing (the marker would be refused, not lost): no marker is made for it.
      if (target.length + 20 < MAX_TEXT_BLOCK_CHARS - LIMIT_MARGIN) {
        typed = this.newMarker(peer.sectionId, "main", "live");
        target.insert(this.safePosition(target.toString()), ` ${typed.text} `);
      }
    }
    await new Promise((r) => setTimeout(r, this.rng.int(0, 300)));
    peer.live.provider.connect();
    await waitFor(() => peer.live.provider.synced, ACK_TIMEOUT_MS, `peer ${peer.id} back in sync`);
    if (typed && peer.sectionId) {
      const text = typed.text;
      await this.seenElsewhere(peer, (json) => json.includes(text), `offline edit ${text}`);
      this.acknowledge(typed, false);
    }
    return `peer ${peer.id} (${peer.principal}@${peer.processIndex}) reconnected${typed ? ` with ${typed.text}` : ""}`;
  }

  /** A client leaves for good and another joins (any principal, process and section it may see). */
  private async replacePeer(): Promise<string> {
    const leaving = this.peers.filter((p) => p.sectionId !== null);
    if (leaving.length > 4) this.dropPeer(this.rng.pick(leaving));
    const principal = this.rng.pick(["ownerAgent", "memberAgent", "ownerPerson"] as const);
    const visible = this.sections.filter((s) => this.access(principal, s.sectionId) !== "none");
    if (visible.length === 0) return "nothing visible";
    const sectionId = this.rng.pick(visible).sectionId;
    const processIndex = this.rng.int(0, 1);
    const peer = await this.connect(principal, processIndex, sectionId);
    return `peer ${peer.id} (${principal}@${processIndex}) joined ${sectionId.slice(0, 8)}`;
  }

  private writer(sectionId?: string): "ownerAgent" | "memberAgent" | null {
    const principal = this.rng.pick(["ownerAgent", "memberAgent"] as const);
    if (!sectionId || this.access(principal, sectionId) === "edit") return principal;
    return this.access("ownerAgent", sectionId) === "edit" ? "ownerAgent" : null;
  }

  private async readSection(principal: "ownerAgent" | "memberAgent", branch: string, sectionId: string): Promise<ReadSection | null> {
    const answer = await this.call<ReadResult>(principal, "read", {
      documentId: this.documentId,
      branchName: branch,
      sectionIds: [sectionId],
    });
    return answer.ok ? (answer.value.sections[0] ?? null) : null;
  }

  /** New content for a section: a marker added at a safe place in a text block, as a new text block, or as an image's alt text. */
  private contentWith(section: ReadSection, marker: string): Array<Record<string, unknown>> {
    const content = section.content.map((b) => ({ ...b }));
    const small = content.filter((b) => b.blockType === "text" && (b.text as string).length < 50_000);
    const how = this.rng.pick(["inside", "block", "image"] as const);
    if (how === "inside" && small.length > 0) {
      const block = this.rng.pick(small);
      const text = block.text as string;
      const at = this.safePosition(text);
      block.text = `${text.slice(0, at)} api ${marker} ${text.slice(at)}`;
    } else if (how === "image") {
      content.push({ blockType: "image", type: "url", mediaType: "image/png", url: "https://example.com/i.png", alt: `alt ${marker}` });
    } else content.splice(this.rng.int(0, content.length), 0, { blockType: "text", text: `Written by an agent: ${marker}` });
    return content;
  }

  private async mcpUpdate(): Promise<string> {
    const target = this.rng.pick(this.plainSections());
    const principal = target && this.writer(target.sectionId);
    if (!target || !principal) return "no writable section";
    const current = await this.readSection(principal, "main", target.sectionId);
    if (!current) throw new Error(`${principal} cannot read section ${target.sectionId} it may edit`);
    const marker = this.newMarker(target.sectionId, "main", "mcp");
    const rename = this.rng.chance(0.15) && current.name.length < 150;
    const args: Record<string, unknown> = {
      action: "update",
      documentId: this.documentId,
      branchName: "main",
      sectionId: target.sectionId,
      expectedContentHash: current.contentHash,
    };
    if (rename) args.newName = `${current.name} ${marker.text}`;
    else args.newContent = this.contentWith(current, marker.text);
    const answer = await this.call<{ commitId: string }>(principal, "sections", args);
    if (!answer.ok) throw new Error(`update refused: ${answer.code} ${answer.message}`);
    this.acknowledge(marker, true);
    this.revertTargets.push(answer.value.commitId);
    return `${principal} ${rename ? "renamed" : "updated"} ${target.sectionId.slice(0, 8)} with ${marker.text}`;
  }

  private async mcpCreate(): Promise<string> {
    const principal = this.rng.pick(["ownerAgent", "memberAgent"] as const);
    const text = this.nextMarkerText();
    const visible = this.sections.filter((s) => this.access(principal, s.sectionId) !== "none").length;
    const answer = await this.must<{ sectionId: string; commitId: string }>(principal, "sections", {
      action: "create",
      documentId: this.documentId,
      branchName: "main",
      name: `Added ${text}`,
      content: [{ blockType: "text", text: `Created by ${principal}: ${text}` }],
      position: this.rng.int(0, visible),
    });
    this.revertTargets.push(answer.commitId);
    await this.refresh(null);
    this.acknowledge(this.newMarker(answer.sectionId, "main", "mcp", text), true);
    if (this.rng.chance(0.6)) {
      const peer = await this.connect(principal, this.rng.int(0, 1), answer.sectionId);
      await this.connect("ownerAgent", 1 - peer.processIndex, answer.sectionId);
    }
    return `${principal} created ${answer.sectionId.slice(0, 8)} (${text})`;
  }

  private async mcpReorder(): Promise<string> {
    const principal = this.rng.pick(["ownerAgent", "memberAgent"] as const);
    const read = await this.must<ReadResult>(principal, "read", { documentId: this.documentId, branchName: "main" });
    const order = read.sections.map((s) => s.sectionId);
    for (let i = order.length - 1; i > 0; i--) {
      const j = this.rng.int(0, i);
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    const answer = await this.call<{ commitId: string }>(principal, "sections", {
      action: "reorder",
      documentId: this.documentId,
      branchName: "main",
      sectionOrder: order,
    });
    if (!answer.ok) {
      // Moving needs edit on what moves: a member who only reads some section may be refused.
      if (principal === "memberAgent" && answer.code === "PERMISSION_DENIED") return `member refused: ${answer.message}`;
      throw new Error(`reorder refused: ${answer.code} ${answer.message}`);
    }
    this.revertTargets.push(answer.value.commitId);
    await this.refresh(null);
    return `${principal} reordered ${order.length} sections`;
  }

  private async mcpDelete(): Promise<string> {
    const plain = this.plainSections();
    if (plain.length <= 2) return "kept the last sections";
    const target = this.rng.pick(plain);
    const principal = this.writer(target.sectionId);
    if (!principal) return "nobody may delete it";
    const answer = await this.must<{ commitId: string }>(principal, "sections", {
      action: "delete",
      documentId: this.documentId,
      branchName: "main",
      sectionId: target.sectionId,
    });
    this.revertTargets.push(answer.commitId);
    await this.refresh("section delete");
    return `${principal} deleted ${target.sectionId.slice(0, 8)}`;
  }

  /**
   * Section overrides on a branch, merged to main by the owner in person (an agent never changes access: README
   * "Access"); the agent opens the request. Hiding a section also writes new text into it in the same commit.
   */
  private async setOverrides(): Promise<string> {
    const target = this.rng.pick(this.plainSections());
    if (!target) return "no plain section";
    const defaultPermission = this.rng.pick(["edit", "read", "none", null] as const);
    const aiAccess = this.rng.pick(["edit", null] as const);
    this.branchCount += 1;
    const branchName = `perm-${this.branchCount}`;
    await this.must("ownerAgent", "documents", { action: "create_branch", documentId: this.documentId, branchName });
    const args: Record<string, unknown> = {
      action: "update",
      documentId: this.documentId,
      branchName,
      sectionId: target.sectionId,
      defaultPermission,
      aiAccess,
    };
    let whisper: Marker | null = null;
    if (defaultPermission === "none" && this.access("memberAgent", target.sectionId) !== "none") {
      // Written in the commit that hides it: the member must never receive it.
      const current = await this.readSection("ownerAgent", branchName, target.sectionId);
      whisper = this.newMarker(target.sectionId, "main", "mcp");
      this.hidden.memberAgent.set(target.sectionId, new Set([...(this.hidden.memberAgent.get(target.sectionId) ?? []), whisper.text]));
      args.newContent = [...current!.content, { blockType: "text", text: `Whisper ${whisper.text}` }];
    }
    await this.person("sections", args);
    const opened = await this.call<{ mergeRequestId: string }>("ownerAgent", "merge_requests", {
      action: "create",
      documentId: this.documentId,
      sourceBranch: branchName,
      targetBranch: "main",
      title: `Overrides ${this.branchCount}`,
    });
    // Overrides main already has (and no whisper) change nothing: the update commits nothing, so the branch has no commit
    // main lacks and the request is refused. That refusal, and only it, is what such a step must get.
    const unchanged = !whisper && target.defaultPermission === defaultPermission && target.aiAccess === aiAccess;
    if (unchanged) {
      if (opened.ok || opened.code !== "NOTHING_TO_MERGE") {
        throw new Error(`overrides main already has, merged from ${branchName}: expected NOTHING_TO_MERGE, got ${JSON.stringify(opened)}`);
      }
      await this.refresh(null);
      return `${target.sectionId.slice(0, 8)}: defaultPermission ${defaultPermission}, aiAccess ${aiAccess} already set (nothing to merge)`;
    }
    if (!opened.ok) throw new Error(`MCP merge_requests create refused: ${opened.code} ${opened.message}`);
    const request = opened.value;
    await this.person("merge_requests", { action: "execute", mergeRequestId: request.mergeRequestId });
    if (whisper) this.acknowledge(whisper, true);
    await this.refresh(null);
    return `${target.sectionId.slice(0, 8)}: defaultPermission ${defaultPermission}, aiAccess ${aiAccess}${whisper ? `, whisper ${whisper.text}` : ""}`;
  }

  private async commit(): Promise<string> {
    const principal = this.rng.pick(["ownerAgent", "memberAgent", "ownerPerson"] as const);
    const input = { action: "commit", documentId: this.documentId, branchName: "main", commitMessage: `Fuzz commit at step ${this.step}` };
    const answer =
      principal === "ownerPerson"
        ? { ok: true as const, value: await this.person<{ changed: boolean; commitId: string }>("documents", input) }
        : await this.call<{ changed: boolean; commitId: string }>(principal, "documents", input);
    if (!answer.ok) throw new Error(`commit refused: ${answer.code} ${answer.message}`);
    if (answer.value.changed) {
      // What was acknowledged is stored, and a commit takes every stored edit of the sections the committer may edit.
      for (const m of this.markers.values()) {
        if (m.branch === "main" && m.state === "acked" && this.access(principal, m.sectionId) === "edit") m.committed = true;
      }
      this.revertTargets.push(answer.value.commitId);
    }
    await this.refresh(null);
    return `${principal} committed (changed: ${answer.value.changed})`;
  }

  private async discard(): Promise<string> {
    const principal = this.rng.pick(["ownerAgent", "memberAgent"] as const);
    const answer = await this.call<{ discardedSections: number }>(principal, "documents", {
      action: "discard",
      documentId: this.documentId,
      branchName: "main",
    });
    if (!answer.ok) throw new Error(`discard refused: ${answer.code} ${answer.message}`);
    // Uncommitted live edits are gone on purpose, in the sections the caller may edit (the others keep their drafts).
    const n = this.deleteMarkers(
      (m) => m.branch === "main" && m.via === "live" && !m.committed && this.access(principal, m.sectionId) === "edit",
      `discard by ${principal}`,
    );
    return `${principal} discarded ${answer.value.discardedSections} sections (${n} markers)`;
  }

  private async sideWrite(): Promise<string> {
    const principal = this.rng.pick(["ownerAgent", "memberAgent"] as const);
    const read = await this.must<ReadResult>(principal, "read", { documentId: this.documentId, branchName: "side" });
    const writable = read.sections.filter(
      (s) => this.section(s.sectionId)?.kind === "plain" && this.access(principal, s.sectionId) === "edit",
    );
    if (writable.length === 0) return "nothing writable on side";
    const section = this.rng.pick(writable);
    const marker = this.newMarker(section.sectionId, "side", "mcp");
    await this.must(principal, "sections", {
      action: "update",
      documentId: this.documentId,
      branchName: "side",
      sectionId: section.sectionId,
      newContent: this.contentWith(section, marker.text),
      expectedContentHash: section.contentHash,
    });
    this.acknowledge(marker, true);
    this.sideDirty = true;
    return `${principal} wrote ${marker.text} on side`;
  }

  /** Merges side into main; a conflict keeps main's version (side's markers stay in side's history). */
  private async merge(): Promise<string> {
    if (!this.sideDirty) return "side has nothing new";
    const request = await this.must<{ mergeRequestId: string }>("ownerAgent", "merge_requests", {
      action: "create",
      documentId: this.documentId,
      sourceBranch: "side",
      targetBranch: "main",
      title: `Side at step ${this.step}`,
    });
    // execute answers the merge request: its mergeCommitId is main's new head (side's head when it fast-forwards).
    let answer = await this.call<{ status: string; mergeCommitId: string | null }>("ownerAgent", "merge_requests", {
      action: "execute",
      mergeRequestId: request.mergeRequestId,
    });
    let resolved = 0;
    if (!answer.ok && answer.code === "UNRESOLVED_CONFLICTS") {
      const missing = (answer.details?.missing as { sections: string[] } | undefined)?.sections ?? [];
      resolved = missing.length;
      answer = await this.call("ownerAgent", "merge_requests", {
        action: "execute",
        mergeRequestId: request.mergeRequestId,
        resolutions: missing.map((sectionId) => ({ sectionId, resolution: "target" })),
      });
    }
    if (!answer.ok) throw new Error(`merge refused: ${answer.code} ${answer.message}`);
    if (answer.value.status !== "merged" || !answer.value.mergeCommitId) {
      throw new Error(`merge answered ok but ${answer.value.status}, merge commit ${answer.value.mergeCommitId}`);
    }
    this.sideDirty = false;
    this.revertTargets.push(answer.value.mergeCommitId);
    await this.refresh(null);
    return `merged side (${resolved} conflicts kept main's)`;
  }

  private async revert(): Promise<string> {
    if (this.revertTargets.length === 0) return "nothing to revert to";
    const commitId = this.rng.pick(this.revertTargets);
    const changes = await this.revertWouldChange(commitId);
    const answer = await this.call<{ commitId: string }>("ownerAgent", "documents", {
      action: "revert",
      documentId: this.documentId,
      branchName: "main",
      commitId,
    });
    if (!answer.ok) {
      // A commit whose message the agent may not see (it touched the section hidden from agents) is not one it may revert to.
      if (answer.code === "NOT_FOUND") return `not revertable by the agent: ${answer.message}`;
      // Nor one whose sections' overrides differ from main's now: that revert would change access, which agents never do.
      if (changes.overrides && answer.code === "PERMISSION_DENIED" && /agents cannot change access/.test(answer.message)) {
        return `not revertable by the agent: ${answer.message}`;
      }
      // Nor one that changes the section aiAccess hides from agents (it changed since: a commit in person took live edits of it).
      if (changes.aiSecret && answer.code === "PERMISSION_DENIED" && answer.message.includes("aiAccess")) {
        return `not revertable by the agent: ${answer.message}`;
      }
      throw new Error(`revert refused: ${answer.code} ${answer.message} (would change: ${JSON.stringify(changes)})`);
    }
    if (changes.aiSecret || changes.overrides) {
      throw new Error(`the owner's agent reverted to ${commitId}, which changes what an agent may not: ${JSON.stringify(changes)}`);
    }
    this.revertTargets.push(answer.value.commitId);
    await this.refresh("revert");
    await this.peersAbsorbed("revert");
    return `reverted to ${commitId.slice(0, 8)}`;
  }

  /**
   * Waits until every connected peer holds its section as the draft has it. A revert may remove a block and put
   * another in its place; text typed into the removed block before its removal reached the typist is gone with it, by
   * design (as in any editor: an edit inside a paragraph someone else deleted), so the next operation waits for the
   * peers to have taken the revert in rather than count such a keystroke as lost. The draft is read again while a peer
   * differs: a peer's own last keystrokes (a deletion is not waited for as a marker is) may still be on their way to
   * the server at the first read, and the draft takes them in later (seed 953564).
   */
  private async peersAbsorbed(what: string): Promise<void> {
    const readDrafted = async () => {
      const draft = await this.person<ReadResult>("read", { documentId: this.documentId, branchName: "main", includeDraft: true });
      return new Map(draft.sections.map((s) => [s.sectionId, JSON.stringify(s.content.map(sortedFields))]));
    };
    let drafted = await readDrafted();
    let readAt = Date.now();
    for (const peer of this.peers) {
      const sectionId = peer.sectionId;
      if (!sectionId || !drafted.get(sectionId) || !peer.live.provider.wsconnected) continue;
      const has = () => JSON.stringify((JSON.parse(this.sectionJson(peer)) as { content: unknown }).content) === drafted.get(sectionId);
      const hasReadingAgain = async () => {
        if (has()) return true;
        if (Date.now() - readAt < DRAFT_REREAD_MS) return false;
        drafted = await readDrafted();
        readAt = Date.now();
        return has();
      };
      await waitFor(hasReadingAgain, ACK_TIMEOUT_MS, `peer ${peer.id} taking in the ${what}`);
    }
  }

  /**
   * What reverting main to a commit would change that an agent may not, read by the owner in person: the section
   * hidden from agents (its name, content or overrides), and the overrides of a section the revert keeps or brings
   * back (README "Access": an API token never changes a section's access; a section that goes away changes none).
   */
  private async revertWouldChange(commitId: string): Promise<{ aiSecret: boolean; overrides: boolean }> {
    const target = await this.person<ReadResult>("read", { documentId: this.documentId, commitId });
    const head = await this.person<ReadResult>("read", { documentId: this.documentId, branchName: "main" });
    const ai = this.sections.find((s) => s.kind === "aiSecret")?.sectionId;
    const hashOf = (read: ReadResult, id: string | undefined) => read.sections.find((s) => s.sectionId === id)?.contentHash ?? null;
    const now = new Map(head.sections.map((s) => [s.sectionId, s]));
    const overrides = target.sections.some(
      (s) =>
        (now.get(s.sectionId)?.defaultPermission ?? null) !== s.defaultPermission ||
        (now.get(s.sectionId)?.aiAccess ?? null) !== s.aiAccess,
    );
    return { aiSecret: ai !== undefined && hashOf(target, ai) !== hashOf(head, ai), overrides };
  }

  private async mcpRead(): Promise<string> {
    const principal = this.rng.pick(["ownerAgent", "memberAgent"] as const);
    const how = this.rng.pick(["draft", "head", "commit", "log", "show"] as const);
    const documentId = this.documentId;
    const commitId = this.revertTargets.length > 0 ? this.rng.pick(this.revertTargets) : undefined;
    if (how === "draft") await this.must(principal, "read", { documentId, branchName: "main", includeDraft: true });
    else if (how === "head") await this.must(principal, "read", { documentId, branchName: this.rng.pick(["main", "side"]) });
    else if (how === "log") await this.must(principal, "documents", { action: "log", documentId, branchName: "main" });
    else if (commitId) {
      if (how === "commit") await this.must(principal, "read", { documentId, commitId });
      else await this.must(principal, "documents", { action: "show", documentId, commitId });
    }
    return `${principal} ${how}`;
  }

  /** Stops a process (SIGTERM or kill -9) and starts it again on its port; clients reconnect by themselves and hand over what it lacks. */
  private async bounce(signal: "SIGTERM" | "SIGKILL"): Promise<string> {
    const index = this.rng.int(0, 1);
    const burst: Marker[] = [];
    const author = this.editingPeer((p) => p.processIndex === index && p.principal !== "memberAgent");
    if (author && this.rng.chance(0.8)) {
      // Typed and not waited for: the process may die inside the durability window, and the author keeps them.
      for (let i = this.rng.int(1, 3); i > 0; i--) {
        const target = this.rng.pick(this.texts(author));
        if (!target || target.length + 20 > MAX_TEXT_BLOCK_CHARS - LIMIT_MARGIN) break;
        const marker = this.newMarker(author.sectionId!, "main", "live");
        target.insert(this.safePosition(target.toString()), ` ${marker.text} `);
        burst.push(marker);
      }
    }
    await this.world.processes[index]!.stop(signal);
    this.world.processes[index] = await startQuireProcess({
      databaseUrl: this.world.database.url!,
      redisUrl: this.world.redisUrl,
      port: this.world.ports[index],
    });
    // Its MCP clients spoke to the old process: stateless HTTP, but open new ones anyway.
    for (const key of [...this.mcp.keys()].filter((k) => k.endsWith(`@${index}`))) {
      await this.mcp.get(key)!.close();
      this.mcp.delete(key);
    }
    await this.allConnected();
    for (const marker of burst) {
      await this.seenElsewhere(author!, (json) => json.includes(marker.text), `burst ${marker.text} after ${signal}`);
      this.acknowledge(marker, false);
    }
    return `${signal} process ${index}${author ? ` after peer ${author.id} typed ${burst.map((m) => m.text).join(" ")}` : ""}`;
  }

  private restart(): Promise<string> {
    this.counts.restarts += 1;
    return this.bounce("SIGTERM");
  }

  private kill(): Promise<string> {
    this.counts.kills += 1;
    return this.bounce("SIGKILL");
  }

  private async allConnected(): Promise<void> {
    for (const peer of this.peers) {
      const terminal = peer.closeCodes.find((c) => c >= 4400 && c < 4500);
      if (terminal) throw new Error(`peer ${peer.id} (${peer.principal} on ${peer.sectionId ?? "outline"}) was closed with ${terminal}`);
      await waitFor(() => peer.live.provider.wsconnected && peer.live.provider.synced, 30_000, `peer ${peer.id} reconnected`);
    }
  }

  // -------------------------------------------------------------------------
  // Invariants.
  // -------------------------------------------------------------------------

  private assertNoHiddenText(principal: Principal, received: string | Buffer, where: string): void {
    if (principal === "ownerPerson") return;
    for (const [sectionId, texts] of this.hidden[principal]) {
      for (const text of texts) {
        if (received.includes(text)) {
          throw new Error(`${principal} received ${JSON.stringify(text)} of section ${sectionId}, hidden from it, in ${where}`);
        }
      }
    }
  }

  private scanFrames(peer: Peer): void {
    for (; peer.checkedFrames < peer.live.frames.length; peer.checkedFrames++) {
      this.assertNoHiddenText(peer.principal, peer.live.frames[peer.checkedFrames]!, `a frame to peer ${peer.id}`);
      this.counts.framesChecked += 1;
    }
  }

  async checkFrames(): Promise<void> {
    for (const peer of this.peers) this.scanFrames(peer);
  }

  /** Converge, restart both processes, and check what survived. */
  async finish(): Promise<void> {
    this.step += 1;
    await this.allConnected();
    const liveState = new Map<string, string>();
    // A commit's rebase of the draft (new comments' tags become their ids) reaches the rooms of the other process
    // behind its answer, and adds no marker to wait for: the peers take in what the draft holds before the snapshot.
    await this.peersAbsorbed("last operations");
    for (const section of this.sections) {
      const peers = this.sectionPeers(section.sectionId);
      if (peers.length === 0) continue;
      // The last MCP writes reach the rooms behind their answers: give them the time a head move takes (on a loaded box) before the snapshot.
      // Those of the last operations only: an older one may be gone from the draft on purpose (a revert keeps it in history).
      const expected = [...this.markers.values()].filter(
        (m) => m.branch === "main" && m.sectionId === section.sectionId && m.state === "acked" && m.step >= this.step - 5,
      );
      // Not an invariant by itself (a marker that never arrives fails below, by the restart's comparison or as lost): time only.
      await waitFor(() => expected.every((m) => this.sectionJson(peers[0]!).includes(m.text)), ACK_TIMEOUT_MS, "head moves").catch(
        () => undefined,
      );
      await waitFor(
        () => peers.every((p) => this.sectionJson(p) === this.sectionJson(peers[0]!)),
        ACK_TIMEOUT_MS,
        `convergence of section ${section.sectionId}`,
      ).catch((error: Error) => {
        throw new Error(
          `${error.message}: ${peers.map((p) => `peer ${p.id}@${p.processIndex}: ${this.sectionJson(p).slice(0, 300)}`).join(" | ")}`,
        );
      });
      liveState.set(section.sectionId, this.sectionJson(peers[0]!));
    }
    await this.checkFrames();
    this.log(`converged: ${liveState.size} sections with clients`);
    for (const peer of [...this.peers]) this.dropPeer(peer);
    for (const client of this.mcp.values()) await client.close();
    this.mcp.clear();
    // Both processes stop gracefully and start again: the draft comes from storage alone.
    for (let index = 0; index < 2; index++) await this.world.processes[index]!.stop("SIGTERM");
    for (let index = 0; index < 2; index++) {
      this.world.processes[index] = await startQuireProcess({
        databaseUrl: this.world.database.url!,
        redisUrl: this.world.redisUrl,
        port: this.world.ports[index],
      });
    }
    const drafts = new Map<string, string>();
    for (const section of this.sections) {
      const principal: Principal = section.kind === "aiSecret" ? "ownerPerson" : "ownerAgent";
      const fresh = await this.connect(principal, this.rng.int(0, 1), section.sectionId);
      const stored = this.sectionJson(fresh);
      const before = liveState.get(section.sectionId);
      if (before !== undefined && stored !== before) {
        throw new Error(
          `section ${section.sectionId} after a restart differs from the live state before it: ${firstDifference(before, stored)}`,
        );
      }
      assertValidSection(fresh.live.section(), section.sectionId);
      drafts.set(section.sectionId, stored);
      this.dropPeer(fresh);
    }
    const agentDraft = await this.must<ReadResult>("ownerAgent", "read", {
      documentId: this.documentId,
      branchName: "main",
      includeDraft: true,
    });
    await this.must("memberAgent", "read", { documentId: this.documentId, branchName: "main", includeDraft: true });
    for (const s of agentDraft.sections) {
      const room = JSON.parse(drafts.get(s.sectionId) ?? "null") as { content: unknown } | null;
      if (room && JSON.stringify(room.content) !== JSON.stringify(s.content.map(sortedFields))) {
        throw new Error(`read includeDraft of ${s.sectionId} differs from its room's state`);
      }
    }
    const onBranch = { main: [...drafts.values()].join("\n"), side: "" };
    for (const branch of ["main", "side"] as const) onBranch[branch] += await this.history(branch);
    let verified = 0;
    const missing: string[] = [];
    for (const marker of this.markers.values()) {
      if (marker.state === "deleted") continue;
      if (marker.state === "pending") throw new Error(`marker ${marker.text} was never acknowledged`);
      if (onBranch[marker.branch as "main" | "side"].includes(marker.text)) verified++;
      else missing.push(`${marker.text} (${marker.via}, section ${marker.sectionId.slice(0, 8)}, committed: ${marker.committed})`);
    }
    if (missing.length > 0) throw new Error(`acknowledged edits lost: ${missing.join(", ")}`);
    this.counts.markersVerified += verified;
    this.log(
      `verified ${verified} markers, ${[...this.markers.values()].filter((m) => m.state === "deleted").length} deliberately deleted`,
    );
  }

  /** Every version of a branch's sections in its history, as JSON: agents' reads over MCP, the agents' hidden section in person. */
  private async history(branch: string): Promise<string> {
    const commits: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.must<{ commits: Array<{ commitId: string }>; nextCursor: string | null }>("ownerAgent", "documents", {
        action: "log",
        documentId: this.documentId,
        branchName: branch,
        limit: 100,
        ...(cursor ? { cursor } : {}),
      });
      commits.push(...page.commits.map((c) => c.commitId));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    const parts: string[] = [];
    const aiSecret = this.sections.find((s) => s.kind === "aiSecret")?.sectionId;
    for (const commitId of commits) {
      parts.push(JSON.stringify(await this.must("ownerAgent", "read", { documentId: this.documentId, commitId })));
      if (aiSecret && branch === "main")
        parts.push(JSON.stringify(await this.person("read", { documentId: this.documentId, commitId, sectionIds: [aiSecret] })));
    }
    return parts.join("\n");
  }

  closeAll(): void {
    for (const peer of [...this.peers]) {
      peer.live.close();
      this.peers.splice(this.peers.indexOf(peer), 1);
    }
    for (const client of this.mcp.values()) void client.close();
    this.mcp.clear();
  }
}

const MARKER = /⟦[^⟧]*⟧/g;
/** A whole comment element, tags and commented text: an edit inside one changes the comment (refused for stored ones), or nests another. */
const COMMENT_ELEMENT =
  /<svc:comment\s+id="[^"]*"\s*>[\s\S]*?<\/svc:comment>|<svc:comment-new(?:\s+[\w-]+="[^"]*")*\s*>[\s\S]*?<\/svc:comment-new>/g;
const spansOf = (text: string, pattern: RegExp): Array<[number, number]> =>
  [...text.matchAll(pattern)].map((m) => [m.index, m.index + m[0].length]);
const markerSpans = (text: string) => spansOf(text, MARKER);
const commentSpans = (text: string) => spansOf(text, COMMENT_ELEMENT);
const protectedSpans = (text: string) => [...markerSpans(text), ...commentSpans(text)].sort((a, b) => a[0] - b[0]);
const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
/** How many times `needle` stands in `haystack`. */
const occurrences = (haystack: string, needle: string): number => haystack.split(needle).length - 1;

/** A block with its fields in one order, to compare blocks from a Y.Map (insertion order) and from `read`. */
const sortedFields = (block: object): Record<string, unknown> =>
  Object.fromEntries(Object.entries(block).sort(([a], [b]) => a.localeCompare(b)));

/** Where two long strings part: their lengths and 160 characters of each around the first difference. */
function firstDifference(a: string, b: string): string {
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  const around = (text: string) => JSON.stringify(text.slice(Math.max(0, i - 40), i + 120));
  return `lengths ${a.length} / ${b.length}, first difference at ${i}:\n  live:   ${around(a)}\n  stored: ${around(b)}`;
}

/** The draft holds only what the write path would take: valid blocks, no NUL, a name of at most 300 characters. */
function assertValidSection(section: { name: string; content: unknown[] }, sectionId: string): void {
  if (section.name.length > 300) throw new Error(`section ${sectionId}'s draft name is ${section.name.length} characters`);
  const json = JSON.stringify(section);
  if (json.includes("\\u0000")) throw new Error(`section ${sectionId}'s draft holds a NUL character`);
  section.content.forEach((block, index) => {
    const parsed = blockSchema.safeParse(block);
    if (!parsed.success) throw new Error(`section ${sectionId}'s draft block ${index} is invalid: ${parsed.error.message.slice(0, 300)}`);
  });
}

export function emptyCounts(): FuzzCounts {
  return {
    operations: {},
    invalid: {},
    markersAcknowledged: 0,
    markersDeleted: 0,
    markersVerified: 0,
    framesChecked: 0,
    restarts: 0,
    kills: 0,
  };
}
