/**
 * Documents as MCP resources, through the SDK client over HTTP: the list
 * (paged by cursor), the templates, reads as markdown with each section's
 * contentHash (access exactly as `read`: a section hidden from agents never
 * appears), and subscriptions whose update notification arrives on the
 * client's event stream after another person's write. A user of another
 * workspace gets nothing.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ErrorCode, McpError, ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, expect, test } from "vitest";
import { issueApiToken } from "@/server/auth/accounts";
import { callMcp, startTestServer, type TestServer, type TestUser } from "../helpers/server";

let server: TestServer;
let owner: TestUser;
let writer: TestUser;
let agent: Client;
let outsider: Client;
let documentId: string;
let introId: string;
let secretId: string;

const text = (t: string) => ({ blockType: "text" as const, text: t });

beforeAll(async () => {
  server = await startTestServer();
  owner = await server.createUser("owner@example.test", "Olive Owner");
  writer = await server.createUser("wes@example.test", "Wes Writer");
  const created = await server.callTool("documents", owner.userId, {
    action: "create",
    path: "guides/resources",
    name: "Resources guide",
    sections: [{ name: "Intro", content: [text("Hello **agents**.")] }],
  });
  documentId = created.documentId;
  introId = created.sectionIds[0]!;
  // A branch with a section agents may not see (set by a person, as only a person may).
  await server.callTool("documents", owner.userId, { action: "create_branch", documentId, branchName: "work" });
  const secret = await server.callTool("sections", owner.userId, {
    action: "create",
    documentId,
    branchName: "work",
    name: "Secret",
    content: [text("Not for agents.")],
    aiAccess: "none",
  });
  secretId = secret.sectionId;
  agent = await server.mcpClient(owner.token);
  await server.createOutsider("out@example.test", "Otto Outsider");
  const { token } = await issueApiToken(server.db, { email: "out@example.test", label: "test" }, new Date());
  outsider = await server.mcpClient(token);
});

afterAll(async () => {
  await agent?.close();
  await outsider?.close();
  await server?.close();
});

const uriOf = (...parts: string[]) => `quire://documents/${parts.join("/")}`;

test("initialize declares resources with subscriptions", () => {
  expect(agent.getServerCapabilities()?.resources).toEqual({ subscribe: true });
});

test("resources/list pages through the documents the caller may see", async () => {
  for (let n = 0; n < 50; n++) {
    await server.callTool("documents", owner.userId, { action: "create", path: `many/doc-${String(n).padStart(2, "0")}` });
  }
  const first = await agent.listResources();
  expect(first.resources).toHaveLength(50);
  expect(first.nextCursor).toBeTypeOf("string");
  const second = await agent.listResources({ cursor: first.nextCursor });
  const all = [...first.resources, ...second.resources];
  expect(all).toHaveLength(51);
  expect(second.nextCursor).toBeUndefined();
  expect(all.find((resource) => resource.uri === uriOf(documentId))).toEqual({
    uri: uriOf(documentId),
    name: "guides/resources",
    title: "Resources guide",
    mimeType: "text/markdown",
  });
  expect((await outsider.listResources()).resources).toEqual([]);
});

test("resource templates name a document, a document on a branch and a section", async () => {
  const { resourceTemplates } = await agent.listResourceTemplates();
  expect(resourceTemplates.map((template) => template.uriTemplate)).toEqual([
    "quire://documents/{documentId}",
    "quire://documents/{documentId}/branches/{branch}",
    "quire://documents/{documentId}/branches/{branch}/sections/{sectionId}",
  ]);
});

test("a document reads as markdown with each section's id and contentHash, as `read` sees it", async () => {
  const read = await callMcp<{ sections: Array<{ sectionId: string; contentHash: string }> }>(agent, "read", { documentId });
  const { contents } = await agent.readResource({ uri: uriOf(documentId) });
  expect(contents).toHaveLength(1);
  const [content] = contents as Array<{ uri: string; mimeType: string; text: string; _meta: Record<string, unknown> }>;
  expect(content!.mimeType).toBe("text/markdown");
  expect(content!.text).toContain("# Resources guide");
  expect(content!.text).toContain(
    `## Intro\n\n<!-- section ${introId} contentHash ${read.sections[0]!.contentHash} -->\n\nHello **agents**.`,
  );
  expect(content!._meta.sections).toEqual([{ sectionId: introId, name: "Intro", contentHash: read.sections[0]!.contentHash }]);

  // On the branch the agent sees Intro only: Secret is hidden from agents (aiAccess none), in the text and the list.
  const onBranch = (await agent.readResource({ uri: uriOf(documentId, "branches", "work") })).contents[0] as {
    text: string;
    _meta?: Record<string, unknown>;
  };
  expect(onBranch.text).toContain("## Intro");
  expect(onBranch.text).not.toContain("Secret");
  expect(onBranch.text).not.toContain(secretId);
  expect(onBranch._meta?.sections as unknown[]).toHaveLength(1);
  await expect(agent.readResource({ uri: uriOf(documentId, "branches", "work", "sections", secretId) })).rejects.toMatchObject({
    code: ErrorCode.InvalidParams,
  });

  const section = (await agent.readResource({ uri: uriOf(documentId, "branches", "main", "sections", introId) })).contents[0] as {
    text: string;
  };
  expect(section.text).toBe(`## Intro\n\n<!-- section ${introId} contentHash ${read.sections[0]!.contentHash} -->\n\nHello **agents**.\n`);
});

test("an unknown, malformed or foreign resource is a -32602 error with its URI", async () => {
  for (const uri of [uriOf("00000000-0000-4000-8000-000000000000"), "quire://elsewhere/x", "https://example.test/doc"]) {
    const failure = await agent.readResource({ uri }).catch((error: unknown) => error);
    expect(failure, uri).toBeInstanceOf(McpError);
    expect((failure as McpError).code).toBe(ErrorCode.InvalidParams);
    expect((failure as McpError).data).toEqual({ uri });
  }
  await expect(outsider.readResource({ uri: uriOf(documentId) })).rejects.toMatchObject({ code: ErrorCode.InvalidParams });
  await expect(outsider.subscribeResource({ uri: uriOf(documentId) })).rejects.toMatchObject({ code: ErrorCode.InvalidParams });
});

test("a subscriber hears that the document's head moved after another person's write, and nothing once unsubscribed", async () => {
  const heard: string[] = [];
  let arrived: () => void = () => {};
  agent.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
    heard.push(notification.params.uri);
    arrived();
  });
  const uri = uriOf(documentId);
  const branchUri = uriOf(documentId, "branches", "work");
  await agent.subscribeResource({ uri });
  await agent.subscribeResource({ uri: branchUri });

  const notified = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  await server.callTool("sections", writer.userId, {
    action: "update",
    documentId,
    branchName: "main",
    sectionId: introId,
    newContent: [text("Hello again.")],
  });
  await notified;
  expect(heard).toEqual([uri]);

  // A write on the branch notifies the branch's URI only; after unsubscribing from it, nothing comes.
  const onBranch = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  await server.callTool("sections", writer.userId, {
    action: "update",
    documentId,
    branchName: "work",
    sectionId: introId,
    newContent: [text("Branch text.")],
  });
  await onBranch;
  expect(heard).toEqual([uri, branchUri]);
  await agent.unsubscribeResource({ uri: branchUri });
  await agent.unsubscribeResource({ uri });
  await server.callTool("sections", writer.userId, {
    action: "update",
    documentId,
    branchName: "main",
    sectionId: introId,
    newContent: [text("Unheard.")],
  });
  // The ping answers after the write's notifications would have been written to the stream.
  await agent.ping();
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(heard).toEqual([uri, branchUri]);
});
