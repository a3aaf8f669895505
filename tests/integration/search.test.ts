/**
 * Full-text search (`search` tool) through the real faces: an MCP SDK client
 * over HTTP (an agent's token) and tRPC callers (people). Ranking, highlighted
 * snippets, filters (kind, path prefix, tag, branch), prefixes and typos,
 * comment threads and merge requests, a merge's content found by the search
 * right after the merge returns, `reindex`, and bad input answered with coded
 * errors. Runs on PostgreSQL (TEST_DATABASE_URL) and on PGlite (unset).
 */
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { sql } from "drizzle-orm";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { SearchResult } from "@/server/actions/search";
import { SEARCH_MATCHES_PER_KIND } from "@/server/store/search";
import { reindexAll } from "@/server/store/search-index";
import { text } from "../helpers/blocks";
import { testDatabaseUrl } from "../helpers/database";
import { callMcp, callMcpError, projectRoot, startTestServer, type TestServer, type TestUser } from "../helpers/server";
import { asSent } from "../helpers/as-sent";

const run = promisify(execFile);

let server: TestServer;
let owner: TestUser;
let member: TestUser;
let mcp: Client;

let vpnDocumentId: string;
let vpnSectionId: string;
let tagId: string;
let commentId: string;

type Args = Record<string, unknown>;
const searchMcp = (args: Args) => callMcp<SearchResult>(mcp, "search", args);
const searchAs = (user: TestUser, args: Args) => server.trpcCaller(user).search(asSent(args)) as Promise<SearchResult>;
const snippetText = (hit: SearchResult["hits"][number]) => hit.snippet.map((p) => p.text).join("");
const highlighted = (hit: SearchResult["hits"][number]) => hit.snippet.filter((p) => p.highlighted).map((p) => p.text.toLowerCase());

beforeAll(async () => {
  server = await startTestServer();
  owner = await server.createUser("owner@example.test", "Olive Owner");
  member = await server.createUser("member@example.test", "Max Member");
  mcp = await server.mcpClient(member.token);

  const vpn = await server.callTool("documents", owner.userId, {
    action: "create",
    path: "handbook/it/vpn-setup",
    name: "VPN setup",
    sections: [
      {
        name: "Connecting to the VPN",
        content: [
          text(
            "Install the **VPN** client, then open the VPN profile. The VPN asks for your token.\n\n- Use [the portal](https://vpn.example.com) to reset it.",
          ),
        ],
      },
      { name: "Printers", content: [text("Printers are on floor two. Ask IT if the VPN blocks printing.")] },
      { name: "Orchestration", content: [text("Our clusters run Kubernetes; deployments go through Helm charts.")] },
    ],
  });
  vpnDocumentId = vpn.documentId;
  vpnSectionId = vpn.sectionIds[0]!;

  await server.callTool("documents", owner.userId, {
    action: "create",
    path: "finance/budget",
    sections: [{ name: "Travel", content: [text("Travel is booked through the portal; no VPN needed.")] }],
  });

  const tag = await server.callTool("documents", owner.userId, { action: "create_tag", tagPath: "it/network" });
  tagId = tag.tagId;
  await server.callTool("documents", owner.userId, { action: "assign_tag", documentId: vpnDocumentId, branchName: "main", tagId });

  const commented = await server.callTool("sections", owner.userId, {
    action: "create",
    documentId: vpnDocumentId,
    branchName: "main",
    name: "Questions",
    content: [text('Who owns <svc:comment-new body="Does the firewall allow wireguard traffic?">the gateway</svc:comment-new> today?')],
  });
  const read = await server.callTool("read", owner.userId, {
    documentId: vpnDocumentId,
    branchName: "main",
    sectionIds: [commented.sectionId],
  });
  commentId = read.sections[0]!.comments[0]!.commentId;
  await server.callTool("comments", owner.userId, {
    action: "reply",
    documentId: vpnDocumentId,
    commentId,
    body: "Only over port 51820, says the zebrafish team.",
  });

  await server.callTool("documents", owner.userId, { action: "create_branch", documentId: vpnDocumentId, branchName: "proposal" });
  await server.callTool("sections", owner.userId, {
    action: "create",
    documentId: vpnDocumentId,
    branchName: "proposal",
    name: "Mesh",
    content: [text("A mesh network for every office.")],
  });
  await server.callTool("merge_requests", owner.userId, {
    action: "create",
    documentId: vpnDocumentId,
    sourceBranch: "proposal",
    targetBranch: "main",
    title: "Replace the tunnel with a mesh network",
    description: "Tailscale instead of the old concentrator.",
  });
});

afterAll(async () => {
  await mcp?.close();
  await server?.close();
});

describe("finding and ranking", () => {
  test("the word VPN finds the document by name, its sections by text, ranked, with highlighted snippets", async () => {
    const result = await searchMcp({ query: "VPN" });
    const kinds = result.hits.map((h) => `${h.kind}:${h.sectionName ?? h.documentName}`);
    expect(kinds).toContain("document:VPN setup");
    expect(kinds).toContain("section:Connecting to the VPN");
    expect(kinds).toContain("section:Printers");
    expect(kinds).toContain("section:Travel");
    expect(result.total).toBe(result.hits.length);
    // The section about the VPN (in its name, four times in its text) ranks above the one mentioning it once.
    const connecting = kinds.indexOf("section:Connecting to the VPN");
    expect(connecting).toBeLessThan(kinds.indexOf("section:Printers"));
    expect(connecting).toBeLessThan(kinds.indexOf("section:Travel"));

    const hit = result.hits[connecting]!;
    expect(hit).toMatchObject({ documentId: vpnDocumentId, sectionId: vpnSectionId, branchName: "main", path: "handbook/it/vpn-setup" });
    expect(highlighted(hit).every((w) => w === "vpn")).toBe(true);
    expect(highlighted(hit).length).toBeGreaterThan(0);
    // Markdown syntax is not part of the words: no ** and no link target.
    expect(snippetText(hit)).not.toContain("**");
    expect(snippetText(hit)).not.toContain("https://");
  });

  test("the path's words find the document", async () => {
    const result = await searchMcp({ query: "handbook setup", kind: "document" });
    expect(result.hits.map((h) => h.documentId)).toEqual([vpnDocumentId]);
  });

  test("the last word matches as a prefix, and a mistyped word is corrected to an indexed one", async () => {
    const prefix = await searchMcp({ query: "kuber" });
    expect(prefix.hits.map((h) => h.sectionName)).toEqual(["Orchestration"]);
    expect(prefix.correctedTo).toBeNull();

    const typo = await searchMcp({ query: "kubernetse" });
    expect(typo.hits.map((h) => h.sectionName)).toEqual(["Orchestration"]);
    expect(typo.correctedTo).toEqual(["kubernet"]);
  });

  test("comment threads are found by their comment and by their replies, in the section anchoring them", async () => {
    for (const query of ["firewall wireguard", "zebrafish"]) {
      const result = await searchMcp({ query, kind: "comment" });
      expect(result.hits).toHaveLength(1);
      expect(result.hits[0]).toMatchObject({ kind: "comment", commentId, sectionName: "Questions", documentId: vpnDocumentId });
    }
    // The comment's markup is not the section's words.
    expect((await searchMcp({ query: "wireguard", kind: "section" })).total).toBe(0);
  });

  test("merge requests are found by title and description", async () => {
    const result = await searchAs(owner, { query: "tailscale", kind: "merge_request" });
    expect(result.hits).toHaveLength(1);
    expect(result.hits[0]).toMatchObject({
      kind: "merge_request",
      title: "Replace the tunnel with a mesh network",
      documentId: vpnDocumentId,
    });
    expect(highlighted(result.hits[0]!)).toEqual(["tailscale"]);
  });
});

describe("filters and pages", () => {
  test("path prefix, tag and kind narrow the hits", async () => {
    const byPath = await searchMcp({ query: "VPN", pathPrefix: "finance/" });
    expect(new Set(byPath.hits.map((h) => h.path))).toEqual(new Set(["finance/budget"]));
    const byTag = await searchMcp({ query: "VPN", tagId });
    expect(new Set(byTag.hits.map((h) => h.documentId))).toEqual(new Set([vpnDocumentId]));
    const sectionsOnly = await searchMcp({ query: "VPN", kind: "section" });
    expect(sectionsOnly.hits.every((h) => h.kind === "section")).toBe(true);
    expect(sectionsOnly.total).toBe(3);
  });

  test("pages follow the cursor to the end, each hit once", async () => {
    const all = await searchMcp({ query: "VPN" });
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: SearchResult = await searchMcp({ query: "VPN", limit: 2, ...(cursor ? { cursor } : {}) });
      expect(page.total).toBe(all.total);
      seen.push(...page.hits.map((h) => `${h.kind}:${h.documentId}:${h.sectionId}`));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(all.hits.map((h) => `${h.kind}:${h.documentId}:${h.sectionId}`));
  });

  test(`a query matching more than ${SEARCH_MATCHES_PER_KIND} items of a kind reads only that many: its total says it is a lower bound`, async () => {
    const sections = (from: number, count: number) =>
      Array.from({ length: count }, (_, i) => ({ name: `Herd ${from + i}`, content: [text(`A dugong sighting, number ${from + i}.`)] }));
    await server.callTool("documents", owner.userId, {
      action: "create",
      path: "sightings/log",
      sections: sections(0, SEARCH_MATCHES_PER_KIND),
    });
    const exact = await searchMcp({ query: "dugong", kind: "section" });
    expect(exact).toMatchObject({ total: SEARCH_MATCHES_PER_KIND, totalIsLowerBound: false });

    await server.callTool("documents", owner.userId, {
      action: "create",
      path: "sightings/more",
      sections: sections(SEARCH_MATCHES_PER_KIND, 5),
    });
    const capped = await searchMcp({ query: "dugong", kind: "section", limit: 50 });
    expect(capped.totalIsLowerBound).toBe(true);
    expect(capped.total).toBe(SEARCH_MATCHES_PER_KIND + 1);
    // Counted and ranked from the same matches: the pages hold exactly `total` hits, each once.
    const seen = new Set(capped.hits.map((h) => h.sectionId));
    for (let cursor = capped.nextCursor; cursor !== null; ) {
      const page: SearchResult = await searchMcp({ query: "dugong", kind: "section", limit: 50, cursor });
      expect(page).toMatchObject({ total: capped.total, totalIsLowerBound: true });
      for (const hit of page.hits) seen.add(hit.sectionId);
      cursor = page.nextCursor;
    }
    expect(seen.size).toBe(capped.total);
    // Another kind is read on its own allowance: the document matching by its path is still found.
    expect((await searchMcp({ query: "sightings", kind: "document" })).total).toBe(2);
  });
});

describe("branches and head moves", () => {
  test("a write on a branch is found on that branch only; the default branch is searched by default", async () => {
    await server.callTool("documents", owner.userId, { action: "create_branch", documentId: vpnDocumentId, branchName: "draft" });
    await server.callTool("sections", owner.userId, {
      action: "update",
      documentId: vpnDocumentId,
      branchName: "draft",
      sectionId: vpnSectionId,
      newContent: [text("The quokka gateway replaces the old VPN.")],
    });
    expect((await searchMcp({ query: "quokka" })).total).toBe(0);
    const onBranch = await searchMcp({ query: "quokka", branchName: "draft" });
    expect(onBranch.hits).toHaveLength(1);
    expect(onBranch.hits[0]).toMatchObject({ branchName: "draft", sectionId: vpnSectionId, sectionName: "Connecting to the VPN" });
    // The branch's other sections are searchable there too.
    expect((await searchMcp({ query: "kubernetes", branchName: "draft" })).total).toBe(1);
  });

  test("a merge's content is found by the search right after the merge returns", async () => {
    await server.callTool("documents", owner.userId, { action: "create_branch", documentId: vpnDocumentId, branchName: "merge-me" });
    await server.callTool("sections", owner.userId, {
      action: "create",
      documentId: vpnDocumentId,
      branchName: "merge-me",
      name: "Escalation",
      content: [text("Page the axolotl rota after midnight.")],
    });
    const request = await server.callTool("merge_requests", owner.userId, {
      action: "create",
      documentId: vpnDocumentId,
      sourceBranch: "merge-me",
      targetBranch: "main",
      title: "Escalation",
    });
    // Over MCP, as an agent would: merge, then search at once.
    const ownerMcp = await server.mcpClient(owner.token);
    try {
      await callMcp(ownerMcp, "merge_requests", { action: "execute", mergeRequestId: request.mergeRequestId });
      const found = await callMcp<SearchResult>(ownerMcp, "search", { query: "axolotl" });
      expect(found.hits.map((h) => `${h.branchName}:${h.sectionName}`)).toEqual(["main:Escalation"]);
    } finally {
      await ownerMcp.close();
    }
  });

  test("a deleted section and a deleted document are no longer found", async () => {
    const doc = await server.callTool("documents", owner.userId, {
      action: "create",
      path: "scratch/pangolin",
      sections: [
        { name: "Pangolin", content: [text("pangolin notes")] },
        { name: "Other", content: [text("okapi notes")] },
      ],
    });
    expect((await searchMcp({ query: "okapi" })).total).toBe(1);
    await server.callTool("sections", owner.userId, {
      action: "delete",
      documentId: doc.documentId,
      branchName: "main",
      sectionId: doc.sectionIds[1]!,
    });
    expect((await searchMcp({ query: "okapi" })).total).toBe(0);
    // A document is deleted on a branch, and the deletion merged.
    await server.callTool("documents", owner.userId, { action: "create_branch", documentId: doc.documentId, branchName: "remove" });
    await server.callTool("documents", owner.userId, { action: "delete", documentId: doc.documentId, branchName: "remove" });
    expect((await searchMcp({ query: "pangolin", branchName: "remove" })).total).toBe(0);
    // Its name (from the path) and its section, on main until the deletion is merged.
    expect((await searchMcp({ query: "pangolin" })).total).toBe(2);
    const request = await server.callTool("merge_requests", owner.userId, {
      action: "create",
      documentId: doc.documentId,
      sourceBranch: "remove",
      targetBranch: "main",
      title: "Remove the scratch document",
    });
    await server.callTool("merge_requests", owner.userId, { action: "execute", mergeRequestId: request.mergeRequestId });
    expect((await searchMcp({ query: "pangolin" })).total).toBe(0);
  });

  test("an index left behind its head (a process that died before indexing its move) is caught up by the next search", async () => {
    const doc = await server.callTool("documents", owner.userId, {
      action: "create",
      path: "scratch/capybara",
      sections: [{ name: "Animal", content: [text("capybara facts")] }],
    });
    await server.callTool("sections", owner.userId, {
      action: "update",
      documentId: doc.documentId,
      branchName: "main",
      sectionId: doc.sectionIds[0]!,
      newContent: [text("tapir facts")],
    });
    expect((await searchMcp({ query: "tapir" })).total).toBe(1);
    // The index as it was before the write: at the first commit, with the section's old words.
    await server.db.execute(sql`delete from search_heads where document_id = ${doc.documentId}`);
    expect((await searchMcp({ query: "tapir" })).total).toBe(1);
    expect((await searchMcp({ query: "capybara", kind: "section" })).total).toBe(0);
  });

  test("a section of a million characters is indexed up to its first 200,000 (a tsvector holds at most 1 MiB), and its branch with it", async () => {
    // Random letters make a distinct word every few characters: the whole text's tsvector was 1.1 MB.
    let seed = 7;
    const letter = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return String.fromCharCode(97 + (seed % 26));
    };
    const filler = Array.from({ length: 150_000 }, () => Array.from({ length: 6 }, letter).join("")).join(" ");
    const doc = await server.callTool("documents", owner.userId, {
      action: "create",
      path: "scratch/huge",
      sections: [
        { name: "Small", content: [text("okapi facts")] },
        { name: "Huge", content: [text(`narwhal ${filler.slice(0, 990_000)} zeta90210`)] },
      ],
    });
    expect((await searchMcp({ query: "okapi" })).hits.map((h) => h.documentId)).toEqual([doc.documentId]);
    expect((await searchMcp({ query: "narwhal" })).total).toBe(1);
    // Past the indexed part.
    expect((await searchMcp({ query: "zeta90210" })).total).toBe(0);
  });

  test("reindex rebuilds a lost index from the branch heads", async () => {
    await server.db.execute(sql`delete from search_sections`);
    expect((await searchMcp({ query: "kubernetes" })).total).toBe(0);
    const rebuilt = await reindexAll(server.db);
    expect(rebuilt.sections).toBeGreaterThan(0);
    expect((await searchMcp({ query: "kubernetes" })).total).toBe(1);
    expect((await searchMcp({ query: "kubernetes", branchName: "draft" })).total).toBe(1);
  });
});

describe("quire search reindex", () => {
  const databaseUrl = (): string | undefined => (server.database as { url?: string }).url;

  // The command line reaches a PostgreSQL database by its URL; an in-memory PGlite has none to give it.
  test.runIf(testDatabaseUrl())("rebuilds the index from the command line", async () => {
    await server.db.execute(sql`delete from search_sections`);
    expect((await searchMcp({ query: "helm" })).total).toBe(0);
    const { stdout } = await run(process.execPath, [path.join(projectRoot, "bin", "quire.js"), "search", "reindex"], {
      env: { ...process.env, DATABASE_URL: databaseUrl() },
      cwd: projectRoot,
    });
    expect(stdout).toMatch(/Search index rebuilt: \d+ branch heads, \d+ sections/);
    expect((await searchMcp({ query: "helm" })).total).toBe(1);
  });
});

describe("bad input", () => {
  test.each([
    [{ query: "" }, "query"],
    [{ query: "   " }, "query"],
    [{ query: "x".repeat(201) }, "query"],
    [{ query: "vpn", kind: "wiki" }, "kind"],
    [{ query: "vpn", tagId: "not-a-uuid" }, "tagId"],
    [{ query: "vpn", limit: 0 }, "limit"],
    [{ query: "vpn", limit: 51 }, "limit"],
    [{ query: "vpn", cursor: "garbage" }, "cursor"],
    [{ query: "vpn", unknown: 1 }, ""],
  ])("%j is refused with VALIDATION_FAILED", async (args, field) => {
    const error = await callMcpError(mcp, "search", args);
    expect(error.code).toBe("VALIDATION_FAILED");
    expect(JSON.stringify(error.details ?? {})).toContain(field);
  });

  test("a cursor of another query is refused; odd queries never crash", async () => {
    const page = await searchMcp({ query: "VPN", limit: 1 });
    expect((await callMcpError(mcp, "search", { query: "printers", cursor: page.nextCursor })).code).toBe("VALIDATION_FAILED");
    for (const query of ['"unclosed', "-", "or", "a:* & | !", "'; drop table documents; --", "ünïcödé ✓", "(((("]) {
      const result = await searchMcp({ query });
      expect(result.total).toBeGreaterThanOrEqual(0);
    }
  });

  test("tRPC refuses bad input with BAD_REQUEST and the same code", async () => {
    await expect(searchAs(member, { query: "" })).rejects.toMatchObject({ code: "BAD_REQUEST" });
  });
});
