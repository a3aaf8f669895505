/**
 * The subscriptions the browser follows instead of polling (draftStatus,
 * branchHeads, commentThreads), through the real face: a tRPC client with
 * httpSubscriptionLink (Server-Sent Events) signed in by the session cookie,
 * as the page's own client is, against a started server. Each yields the
 * state at once and again on the events that change it; a member who may not
 * read the document gets NOT_FOUND (also when access goes mid-subscription;
 * UNAUTHENTICATED once they are no longer a member or their token is revoked);
 * a hidden section's comment never arrives; the CSRF guard lets the page's own
 * EventSource requests through and refuses other sites'.
 */
import { createTRPCClient, httpSubscriptionLink, TRPCClientError } from "@trpc/client";
import { EventSource } from "eventsource";
import { encode } from "next-auth/jwt";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { AppRouter } from "@/server/api/router";
import { ensureAuthSecret } from "@/server/auth/accounts";
import { newCommentMarkup } from "@/server/core/comment-markup";
import { text } from "../helpers/blocks";
import { connectLive, type LiveClient, roomName, waitFor } from "../helpers/collab";
import { mergeSectionOverrides, startTestServer, type TestServer, type TestUser } from "../helpers/server";

let server: TestServer;
let owner: TestUser;
let member: TestUser;
const cookies = new Map<string, string>();
const closers: Array<() => void> = [];

beforeAll(async () => {
  server = await startTestServer();
  owner = await server.createUser("owner@example.test", "Olive Owner");
  member = await server.createUser("member@example.test", "Mo Member");
  const secret = await ensureAuthSecret(server.db, undefined);
  for (const user of [owner, member]) {
    cookies.set(user.userId, `next-auth.session-token=${await encode({ token: { sub: user.userId }, secret })}`);
  }
});

afterAll(async () => {
  for (const close of closers) close();
  await server?.close();
});

/** A browser-like client for `user`: subscriptions over SSE with the session cookie and no Origin (a same-origin GET sends none). */
function clientFor(user: TestUser) {
  const cookie = cookies.get(user.userId)!;
  return createTRPCClient<AppRouter>({
    links: [
      httpSubscriptionLink({
        url: `${server.url}/api/trpc`,
        EventSource,
        eventSourceOptions: {
          fetch: (url, init) => fetch(url, { ...init, headers: { ...init?.headers, cookie, "sec-fetch-site": "same-origin" } }),
        },
      }),
    ],
  });
}

interface Followed<T> {
  values: T[];
  error: TRPCClientError<AppRouter> | null;
  latest(): T | undefined;
}

/** Subscribes and records what arrives; stopped when the file ends. */
function follow<T>(subscribe: (handlers: { onData(value: T): void; onError(error: unknown): void }) => { unsubscribe(): void }) {
  const followed: Followed<T> = {
    values: [],
    error: null,
    latest: () => followed.values.at(-1),
  };
  const subscription = subscribe({
    onData: (value) => followed.values.push(value),
    onError: (error) => {
      followed.error = error instanceof TRPCClientError ? error : null;
    },
  });
  closers.push(() => subscription.unsubscribe());
  return followed;
}

const errorCodeOf = (followed: Followed<unknown>) => followed.error?.data?.error?.code;

async function newDocument(path: string, sections: Array<{ name: string; content: ReturnType<typeof text>[] }>) {
  return server.callTool("documents", owner.userId, { action: "create", path, sections });
}

function live(user: TestUser, documentId: string, sectionId: string): Promise<LiveClient> {
  return connectLive(server.url, roomName(documentId, "main", sectionId), { token: user.token }).then((client) => {
    closers.push(() => client.close());
    return client;
  });
}

describe("draftStatus", () => {
  test("the status at once, then again on a head move and on live edits (who edits, what changed)", async () => {
    const doc = await newDocument("live/status", [{ name: "Intro", content: [text("Hello")] }]);
    const sectionId = doc.sectionIds[0]!;
    const status = follow<{
      headCommitId: string;
      uncommittedChanges: boolean;
      editors: Array<{ name: string }>;
      changedSections: Array<{ name: string }>;
    }>((handlers) => clientFor(member).draftStatus.subscribe({ documentId: doc.documentId, branchName: "main" }, handlers));
    await waitFor(() => status.values.length > 0, 5_000, "the first status");
    expect(status.latest()).toMatchObject({ headCommitId: doc.commitId, uncommittedChanges: false, editors: [], changedSections: [] });

    const written = await server.callTool("sections", owner.userId, {
      action: "update",
      documentId: doc.documentId,
      branchName: "main",
      sectionId,
      newContent: [text("Hello again")],
    });
    await waitFor(() => status.latest()?.headCommitId === written.commitId, 5_000, "the head move");

    const editor = await live(owner, doc.documentId, sectionId);
    editor.text().insert(0, "Typed: ");
    await waitFor(() => status.latest()?.uncommittedChanges === true, 5_000, "the draft change");
    expect(status.latest()).toMatchObject({ editors: [{ name: "Olive Owner" }], changedSections: [{ name: "Intro" }] });
    expect(status.error).toBeNull();
  });
});

describe("branchHeads", () => {
  test("the named branches' heads at once and again when one moves; a branch made later joins", async () => {
    const doc = await newDocument("live/heads", [{ name: "One", content: [text("1")] }]);
    const heads = follow<{ branches: Array<{ name: string; headCommitId: string }> }>((handlers) =>
      clientFor(member).branchHeads.subscribe({ documentId: doc.documentId, branchNames: ["main", "feature"] }, handlers),
    );
    await waitFor(() => heads.values.length > 0, 5_000, "the first heads");
    expect(heads.latest()!.branches).toEqual([{ name: "main", headCommitId: doc.commitId }]);

    await server.callTool("documents", owner.userId, { action: "create_branch", documentId: doc.documentId, branchName: "feature" });
    const written = await server.callTool("sections", owner.userId, {
      action: "update",
      documentId: doc.documentId,
      branchName: "feature",
      sectionId: doc.sectionIds[0]!,
      newContent: [text("2")],
    });
    await waitFor(
      () => heads.latest()?.branches.find((b) => b.name === "feature")?.headCommitId === written.commitId,
      5_000,
      "feature's new head",
    );
    expect(heads.latest()!.branches.find((b) => b.name === "main")!.headCommitId).toBe(doc.commitId);
  });
});

describe("commentThreads", () => {
  test("threads as the draft holds them, again on a reply, a resolution and a comment typed live; a hidden section's never", async () => {
    const doc = await newDocument("live/comments", [
      { name: "Plan", content: [text('Before <svc:comment-new body="Is this the date?">the plan</svc:comment-new> after.')] },
      { name: "Board", content: [text('<svc:comment-new body="Board only secret">the board</svc:comment-new>')] },
    ]);
    const [planId, boardId] = doc.sectionIds as [string, string];
    await mergeSectionOverrides(server, owner.userId, { documentId: doc.documentId, sectionId: boardId }, { defaultPermission: "none" });
    const read = await server.callTool("read", owner.userId, { documentId: doc.documentId });
    const commentIn = (sectionId: string) => read.sections.find((s) => s.sectionId === sectionId)!.comments[0]!.commentId;
    const [planComment, boardComment] = [commentIn(planId), commentIn(boardId)];

    type Thread = { commentId: string | null; body: string; status: string; pending: boolean; replies: Array<{ body: string }> };
    const threads = follow<{ threads: Thread[] }>((handlers) =>
      clientFor(member).commentThreads.subscribe({ documentId: doc.documentId, branchName: "main" }, handlers),
    );
    await waitFor(() => threads.values.length > 0, 5_000, "the first threads");
    expect(threads.latest()!.threads).toMatchObject([{ commentId: planComment, body: "Is this the date?", status: "open", replies: [] }]);

    const owners = { documentId: doc.documentId, branchName: "main" };
    await server.callTool("comments", owner.userId, { action: "reply", ...owners, commentId: boardComment, body: "Board reply" });
    await server.callTool("comments", owner.userId, { action: "reply", ...owners, commentId: planComment, body: "Yes, the 3rd" });
    await waitFor(() => threads.latest()!.threads[0]!.replies.length === 1, 5_000, "the reply");
    await server.callTool("comments", owner.userId, { action: "resolve", ...owners, commentId: planComment });
    await waitFor(() => threads.latest()!.threads[0]!.status === "resolved", 5_000, "the resolution");

    const editor = await live(owner, doc.documentId, planId);
    // As the editor's composer writes it: the tags name their author, the connection's own user.
    const typed = newCommentMarkup("Typed live", [], owner.userId);
    editor.text().insert(0, `${typed.open}Now${typed.close} `);
    await waitFor(() => threads.latest()!.threads.some((t) => t.pending && t.body === "Typed live"), 5_000, "the typed comment");

    const everything = JSON.stringify(threads.values);
    expect(everything).not.toContain("Board");
    expect(everything).not.toContain(boardComment);
    expect(threads.error).toBeNull();
  });
  test("a posted comment reaches another person's panel without a commit, anchored; one in a hidden section never", async () => {
    const doc = await newDocument("live/posted", [
      { name: "Plan", content: [text("Ship on the 3rd.")] },
      { name: "Board", content: [text("Board only text")] },
    ]);
    const [planId, boardId] = doc.sectionIds as [string, string];
    await mergeSectionOverrides(server, owner.userId, { documentId: doc.documentId, sectionId: boardId }, { defaultPermission: "none" });
    type Thread = { commentId: string | null; text: string; body: string; anchored: boolean; status: string };
    const threads = follow<{ threads: Thread[] }>((handlers) =>
      clientFor(member).commentThreads.subscribe({ documentId: doc.documentId, branchName: "main" }, handlers),
    );
    await waitFor(() => threads.values.length > 0, 5_000, "the first threads");
    const at = { documentId: doc.documentId, blockIndex: 0 };
    await server.callTool("comments", owner.userId, { action: "post", ...at, sectionId: boardId, quote: "Board", body: "Secret post" });
    const posted = await server.callTool("comments", owner.userId, {
      action: "post",
      ...at,
      sectionId: planId,
      quote: "the 3rd",
      body: "Sure?",
    });
    await waitFor(() => threads.latest()!.threads.length === 1, 5_000, "the posted comment");
    expect(threads.latest()!.threads).toMatchObject([{ commentId: posted.commentId, text: "the 3rd", body: "Sure?", anchored: true }]);
    await server.callTool("comments", owner.userId, { action: "resolve", documentId: doc.documentId, commentId: posted.commentId });
    await waitFor(() => threads.latest()!.threads[0]!.status === "resolved", 5_000, "the resolution");
    expect(JSON.stringify(threads.values)).not.toContain("Secret post");
    expect(threads.error).toBeNull();
  });
  test("a comment typed live and committed is never shown twice or with its tags mixed: the draft is not read mid-commit", async () => {
    // A read between the commit's head move and the draft's rebase onto it once applied the committed change over the
    // very edits it was made from, and the panel showed two threads quoting markup (in about a third of tries).
    const seen: string[] = [];
    for (let i = 0; i < 10; i++) {
      const doc = await newDocument(`live/comment-commit-${i}`, [{ name: "Goals", content: [text("We launch in spring.")] }]);
      type Thread = { commentId: string | null; text: string; pending: boolean };
      const threads = follow<{ threads: Thread[] }>((handlers) =>
        clientFor(owner).commentThreads.subscribe({ documentId: doc.documentId, branchName: "main" }, handlers),
      );
      await waitFor(() => threads.values.length > 0, 5_000, "the first threads");
      const editor = await live(owner, doc.documentId, doc.sectionIds[0]!);
      const typed = newCommentMarkup("Is spring firm?", [], owner.userId);
      editor.doc.transact(() => {
        editor.text().insert("We launch in spring".length, typed.close);
        editor.text().insert("We launch in ".length, typed.open);
      });
      await waitFor(() => threads.latest()!.threads.some((t) => t.pending), 5_000, "the typed comment");
      await server.callTool("documents", owner.userId, { action: "commit", documentId: doc.documentId, branchName: "main" });
      await waitFor(() => threads.latest()!.threads.some((t) => t.commentId !== null), 5_000, "the committed comment");
      for (const { threads: shown } of threads.values) seen.push(JSON.stringify(shown.map((t) => t.text)));
      expect(threads.latest()!.threads).toMatchObject([{ text: "spring", pending: false }]);
      expect(threads.error).toBeNull();
      editor.close();
    }
    expect(seen.filter((texts) => texts.includes("<svc:") || JSON.parse(texts).length > 1)).toEqual([]);
  }, 60_000);
});

describe("access", () => {
  test("a member who may not read the document gets NOT_FOUND from every subscription", async () => {
    const doc = await newDocument("live/closed", [{ name: "Secret", content: [text("s")] }]);
    await server.callTool("documents", owner.userId, { action: "set_permissions", documentId: doc.documentId, defaultPermission: "none" });
    const client = clientFor(member);
    const followed = [
      follow((h) => client.draftStatus.subscribe({ documentId: doc.documentId, branchName: "main" }, h)),
      follow((h) => client.branchHeads.subscribe({ documentId: doc.documentId, branchNames: ["main"] }, h)),
      follow((h) => client.commentThreads.subscribe({ documentId: doc.documentId, branchName: "main" }, h)),
    ];
    await waitFor(() => followed.every((f) => f.error !== null), 5_000, "the refusals");
    expect(followed.map(errorCodeOf)).toEqual(["NOT_FOUND", "NOT_FOUND", "NOT_FOUND"]);
    expect(followed.flatMap((f) => f.values)).toEqual([]);
  });

  test("access taken away mid-subscription ends it with NOT_FOUND", async () => {
    const doc = await newDocument("live/revoked", [{ name: "Soon secret", content: [text("s")] }]);
    const status = follow((h) => clientFor(member).draftStatus.subscribe({ documentId: doc.documentId, branchName: "main" }, h));
    await waitFor(() => status.values.length > 0, 5_000, "the first status");
    await server.callTool("documents", owner.userId, { action: "set_permissions", documentId: doc.documentId, defaultPermission: "none" });
    await waitFor(() => status.error !== null, 5_000, "the refusal");
    expect(errorCodeOf(status)).toBe("NOT_FOUND");
  });

  test("a member removed from the workspace mid-subscription is refused (UNAUTHENTICATED), not served as they were", async () => {
    const leaver = await server.createUser("leaver@example.test", "Lee Leaver");
    const secret = await ensureAuthSecret(server.db, undefined);
    cookies.set(leaver.userId, `next-auth.session-token=${await encode({ token: { sub: leaver.userId }, secret })}`);
    const doc = await newDocument("live/leaver", [{ name: "Team", content: [text("t")] }]);
    const heads = follow((h) => clientFor(leaver).branchHeads.subscribe({ documentId: doc.documentId, branchNames: ["main"] }, h));
    await waitFor(() => heads.values.length > 0, 5_000, "the first heads");
    await server.trpcCaller(owner).workspace({ action: "remove_member", userId: leaver.userId });
    await waitFor(() => heads.error !== null, 5_000, "the refusal");
    expect(errorCodeOf(heads)).toBe("UNAUTHENTICATED");
  });

  test("an API token revoked mid-subscription ends it (UNAUTHENTICATED): the credential is checked again at each state", async () => {
    const doc = await newDocument("live/token", [{ name: "Agents", content: [text("a")] }]);
    const created = await server.trpcCaller(member).apiTokens({ action: "create", label: "subscriber" });
    const token = (created as { token: string }).token;
    const tokenId = (created as { tokenInfo: { tokenId: string } }).tokenInfo.tokenId;
    const agent = createTRPCClient<AppRouter>({
      links: [
        httpSubscriptionLink({
          url: `${server.url}/api/trpc`,
          EventSource,
          eventSourceOptions: {
            fetch: (url, init) => fetch(url, { ...init, headers: { ...init?.headers, authorization: `Bearer ${token}` } }),
          },
        }),
      ],
    });
    const heads = follow((h) => agent.branchHeads.subscribe({ documentId: doc.documentId, branchNames: ["main"] }, h));
    await waitFor(() => heads.values.length > 0, 5_000, "the first heads");
    await server.trpcCaller(member).apiTokens({ action: "revoke", tokenId });
    await waitFor(() => heads.error !== null, 5_000, "the refusal");
    expect(errorCodeOf(heads)).toBe("UNAUTHENTICATED");
  });

  test("bad input is VALIDATION_FAILED", async () => {
    const bad = follow((h) => clientFor(member).branchHeads.subscribe({ documentId: "not-a-uuid", branchNames: [] }, h));
    await waitFor(() => bad.error !== null, 5_000, "the refusal");
    expect(errorCodeOf(bad)).toBe("VALIDATION_FAILED");
  });
});

describe("the CSRF guard on subscriptions", () => {
  /** Opens the event stream by hand and returns its status (and content type), then hangs up. */
  async function open(headers: Record<string, string>) {
    const doc = await newDocument(`live/csrf-${Math.random().toString(36).slice(2)}`, [{ name: "A", content: [text("a")] }]);
    const input = encodeURIComponent(JSON.stringify({ documentId: doc.documentId, branchName: "main" }));
    const abort = new AbortController();
    const res = await fetch(`${server.url}/api/trpc/draftStatus?input=${input}`, {
      headers: { cookie: cookies.get(member.userId)!, accept: "text/event-stream", ...headers },
      signal: abort.signal,
    });
    const answer = { status: res.status, contentType: res.headers.get("content-type") ?? "" };
    abort.abort();
    return answer;
  }

  test("the page's own EventSource request is served; another site's is refused", async () => {
    const own = await open({ "sec-fetch-site": "same-origin" });
    expect(own.status).toBe(200);
    expect(own.contentType).toContain("text/event-stream");
    expect((await open({ origin: server.url })).status).toBe(200);
    expect((await open({ origin: "http://evil.example" })).status).toBe(403);
    expect((await open({ "sec-fetch-site": "cross-site" })).status).toBe(403);
  });
});
