/**
 * Documents as MCP resources, so clients that attach resources to a
 * conversation can attach a Quire document:
 *
 * - `resources/list`: the documents the caller may see, one page at a time
 *   (the `documents` list action, its cursor as the resources cursor);
 * - templates for a document on its default branch, on a branch, and one
 *   section on a branch (RESOURCE_TEMPLATES);
 * - `resources/read`: the `read` action, so access is exactly read's (hidden
 *   sections never appear, an agent is capped by aiAccess), rendered as
 *   markdown with each section's id and contentHash (what `sections` update
 *   takes as expectedContentHash), also listed in `_meta.sections`;
 * - `resources/subscribe`: `notifications/resources/updated` on the
 *   caller's event stream (GET /api/mcp) whenever the subscribed document's
 *   branch head moves (the head-move seam, server/store/head-moves.ts), and
 *   only while the subscriber may still read the document.
 *
 * Quire's MCP face is stateless, so a subscription belongs to the caller
 * (the user and whether they act as an agent), not to a session: every event
 * stream the caller opens hears it. With QUIRE_REDIS_URL, processes share
 * subscriptions and head moves on one channel (as inbox changes are shared),
 * so a subscription made through one process and a write made through
 * another reach a stream held by a third.
 */
import { randomUUID } from "node:crypto";
import type { ServerResponse } from "node:http";
import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  type ResourceTemplate,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { Redis } from "ioredis";
import type { ActionContext } from "@/server/actions/context";
import { type ToolOutput, toolsByName } from "@/server/actions/registry";
import { runTool } from "@/server/actions/tool";
import { isDomainError } from "@/server/core/errors";
import { blockToMarkdown } from "@/server/core/section-markdown";
import { onHeadMoved } from "@/server/store/head-moves";

const SCHEME = "quire://documents/";
const MARKDOWN = "text/markdown";

export const RESOURCE_TEMPLATES: ResourceTemplate[] = [
  {
    uriTemplate: `${SCHEME}{documentId}`,
    name: "document",
    title: "Document",
    description: "A document on its default branch, as markdown with each section's id and contentHash.",
    mimeType: MARKDOWN,
  },
  {
    uriTemplate: `${SCHEME}{documentId}/branches/{branch}`,
    name: "document-on-branch",
    title: "Document on a branch",
    description: "A document on a branch (the branch name URL-encoded), as markdown with each section's id and contentHash.",
    mimeType: MARKDOWN,
  },
  {
    uriTemplate: `${SCHEME}{documentId}/branches/{branch}/sections/{sectionId}`,
    name: "section",
    title: "Section on a branch",
    description: "One section of a document on a branch, as markdown with its contentHash.",
    mimeType: MARKDOWN,
  },
];

/** What a resource URI names: a document, on its default branch (branchName undefined) or a branch, or one section. */
export interface ResourceAddress {
  documentId: string;
  branchName?: string;
  sectionId?: string;
}

const URI_PATTERN = /^quire:\/\/documents\/([^/?#]+)(?:\/branches\/([^/?#]+)(?:\/sections\/([^/?#]+))?)?$/;

export function parseResourceUri(uri: string): ResourceAddress | null {
  const match = URI_PATTERN.exec(uri);
  if (!match) return null;
  try {
    const [documentId, branch, sectionId] = match.slice(1).map((part) => (part === undefined ? undefined : decodeURIComponent(part)));
    return { documentId: documentId!, branchName: branch, sectionId };
  } catch {
    return null;
  }
}

export function resourceUri(address: ResourceAddress): string {
  let uri = `${SCHEME}${encodeURIComponent(address.documentId)}`;
  if (address.branchName !== undefined) uri += `/branches/${encodeURIComponent(address.branchName)}`;
  if (address.sectionId !== undefined) uri += `/sections/${encodeURIComponent(address.sectionId)}`;
  return uri;
}

/** A resource that cannot be read (malformed, unknown, or not the caller's to read): -32602, with the URI, as the spec asks. */
function resourceNotFound(uri: string, why: string): McpError {
  return new McpError(ErrorCode.InvalidParams, `Resource not found: ${uri}. ${why}`, { uri });
}

async function readDocument(context: ActionContext, address: ResourceAddress, uri: string): Promise<ToolOutput<"read">> {
  try {
    return (await runTool(toolsByName.read, context, {
      documentId: address.documentId,
      branchName: address.branchName,
      sectionIds: address.sectionId === undefined ? undefined : [address.sectionId],
    })) as ToolOutput<"read">;
  } catch (error) {
    if (isDomainError(error)) throw resourceNotFound(uri, error.message);
    throw error;
  }
}

/** The markdown a resource reads as: the document's title, then each section's heading, its id and contentHash, and its blocks. */
export function documentMarkdown(view: ToolOutput<"read">, whole: boolean): string {
  const parts: string[] = [];
  if (whole)
    parts.push(`# ${view.name}`, `<!-- quire document ${view.documentId} on ${view.branchName ?? "a commit"} at ${view.headCommitId} -->`);
  for (const section of view.sections) {
    parts.push(`## ${section.name}`, `<!-- section ${section.sectionId} contentHash ${section.contentHash} -->`);
    for (const block of section.content) parts.push(blockToMarkdown(block));
  }
  return `${parts.join("\n\n")}\n`;
}

/** Registers the resource handlers and capability on a protocol server (before it connects). */
export function serveResources(
  server: McpServer,
  subscriptions: ResourceSubscriptions,
  contextOf: (extra: { authInfo?: AuthInfo }) => ActionContext,
): void {
  const protocol = server.server;
  protocol.registerCapabilities({ resources: { subscribe: true } });
  protocol.setRequestHandler(ListResourcesRequestSchema, async (request, extra) => {
    const page = (await runTool(toolsByName.documents, contextOf(extra), {
      action: "list",
      cursor: request.params?.cursor,
    })) as ToolOutput<"documents", { action: "list" }>;
    return {
      resources: page.documents.map((document) => ({
        uri: resourceUri({ documentId: document.documentId }),
        name: document.path,
        title: document.name,
        ...(document.description ? { description: document.description } : {}),
        mimeType: MARKDOWN,
      })),
      ...(page.nextCursor === null ? {} : { nextCursor: page.nextCursor }),
    };
  });
  protocol.setRequestHandler(ListResourceTemplatesRequestSchema, () => ({ resourceTemplates: RESOURCE_TEMPLATES }));
  protocol.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
    const { uri } = request.params;
    const address = parseResourceUri(uri);
    if (!address) throw resourceNotFound(uri, `Quire's resources are ${RESOURCE_TEMPLATES.map((t) => t.uriTemplate).join(", ")}.`);
    const view = await readDocument(contextOf(extra), address, uri);
    return {
      contents: [
        {
          uri,
          mimeType: MARKDOWN,
          text: documentMarkdown(view, address.sectionId === undefined),
          _meta: {
            documentId: view.documentId,
            branchName: view.branchName,
            headCommitId: view.headCommitId,
            sections: view.sections.map(({ sectionId, name, contentHash }) => ({ sectionId, name, contentHash })),
          },
        },
      ],
    };
  });
  protocol.setRequestHandler(SubscribeRequestSchema, async (request, extra) => {
    const { uri } = request.params;
    const address = parseResourceUri(uri);
    if (!address) throw resourceNotFound(uri, "Subscribe to a quire://documents/… URI from resources/list or a template.");
    const context = contextOf(extra);
    // Only what the caller may read now can be subscribed to (the read answers the same refusal).
    await readDocument(context, address, uri);
    subscriptions.subscribe(subscriberOf(context), uri);
    return {};
  });
  protocol.setRequestHandler(UnsubscribeRequestSchema, (request, extra) => {
    subscriptions.unsubscribe(subscriberOf(contextOf(extra)), request.params.uri);
    return {};
  });
}

/** Whose subscriptions: a user, as a person or as an agent (a stateless server has no session to hold them). */
const subscriberOf = (context: ActionContext) => `${context.actor.principal}:${context.actor.userId}`;

/** The most URIs one subscriber may hold: a bound on what a client can make a process remember. */
export const MAX_SUBSCRIPTIONS = 1_000;

/**
 * The most event streams one subscriber may hold open in a process. Opening
 * another ends the oldest, so that a client reconnecting always gets its
 * stream (a dead connection may not have been noticed yet), while no caller
 * can hold an unbounded number of sockets (the spec lets a server end a
 * stream at any time; clients open a new one).
 */
export const MAX_STREAMS_PER_SUBSCRIBER = 8;

const CHANNEL = "quire:mcp-resources";

type Message =
  | { kind: "subscribe" | "unsubscribe"; subscriber: string; uri: string }
  | { kind: "moved"; documentId: string; branchName: string };

interface Stream {
  context: ActionContext;
  res: ServerResponse;
}

/**
 * Who subscribed to what, the event streams open in this process, and the
 * head moves that notify them (see the file comment).
 */
export class ResourceSubscriptions {
  private readonly bySubscriber = new Map<string, Set<string>>();
  private readonly streams = new Map<string, Set<Stream>>();
  private readonly processId = randomUUID();
  private readonly stops: Array<() => Promise<void> | void> = [];
  private publisher: Redis | undefined;

  /** Resolves once the Redis channel is joined (at once without Redis). */
  readonly ready: Promise<void>;

  /** Follows this process's head moves, and with `redisUrl` the other processes' moves and subscriptions. */
  constructor(redisUrl?: string) {
    this.stops.push(onHeadMoved((move) => this.share({ kind: "moved", documentId: move.documentId, branchName: move.branchName })));
    this.ready = redisUrl ? this.joinChannel(redisUrl) : Promise.resolve();
  }

  private async joinChannel(redisUrl: string): Promise<void> {
    const publisher = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 3 });
    const subscriber = new Redis(redisUrl, { lazyConnect: true });
    this.stops.push(async () => {
      this.publisher = undefined;
      await subscriber.quit().catch(() => undefined);
      await publisher.quit().catch(() => undefined);
    });
    await Promise.all([publisher.connect(), subscriber.connect()]);
    subscriber.on("message", (_channel: string, text: string) => {
      try {
        const { from, message } = JSON.parse(text) as { from: string; message: Message };
        if (from !== this.processId) this.apply(message);
      } catch {
        // Not a message of ours: ignored.
      }
    });
    await subscriber.subscribe(CHANNEL);
    this.publisher = publisher;
  }

  subscribe(subscriber: string, uri: string): void {
    const uris = this.bySubscriber.get(subscriber) ?? new Set();
    if (!uris.has(uri) && uris.size >= MAX_SUBSCRIPTIONS) {
      throw new McpError(ErrorCode.InvalidParams, `At most ${MAX_SUBSCRIPTIONS} subscriptions at a time: unsubscribe from some first.`);
    }
    this.share({ kind: "subscribe", subscriber, uri });
  }

  unsubscribe(subscriber: string, uri: string): void {
    this.share({ kind: "unsubscribe", subscriber, uri });
  }

  /**
   * Holds `res` open as the caller's event stream (text/event-stream): it
   * carries their resource notifications until the client goes away.
   */
  openStream(context: ActionContext, res: ServerResponse): void {
    const subscriber = subscriberOf(context);
    const stream: Stream = { context, res };
    const open = this.streams.get(subscriber) ?? new Set();
    for (const oldest of open) {
      if (open.size < MAX_STREAMS_PER_SUBSCRIBER) break;
      open.delete(oldest);
      oldest.res.end();
    }
    open.add(stream);
    this.streams.set(subscriber, open);
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    res.flushHeaders();
    res.on("close", () => {
      open.delete(stream);
      if (open.size === 0) this.streams.delete(subscriber);
    });
  }

  async stop(): Promise<void> {
    await this.ready.catch(() => undefined);
    for (const stop of this.stops.splice(0)) await stop();
    for (const open of this.streams.values()) for (const { res } of open) res.end();
    this.streams.clear();
  }

  /** Applies a message here and hands it to the other processes. */
  private share(message: Message): void {
    this.apply(message);
    this.publisher?.publish(CHANNEL, JSON.stringify({ from: this.processId, message })).catch((error: unknown) => {
      console.error("[quire] sharing an MCP resource event failed", error);
    });
  }

  private apply(message: Message): void {
    if (message.kind === "moved") {
      void this.notifyMoved(message.documentId, message.branchName);
      return;
    }
    const uris = this.bySubscriber.get(message.subscriber) ?? new Set<string>();
    if (message.kind === "subscribe") uris.add(message.uri);
    else uris.delete(message.uri);
    if (uris.size === 0) this.bySubscriber.delete(message.subscriber);
    else this.bySubscriber.set(message.subscriber, uris);
  }

  /** Sends `notifications/resources/updated` for every subscribed URI the move changed, on each stream whose caller may read it. */
  private async notifyMoved(documentId: string, branchName: string): Promise<void> {
    for (const [subscriber, open] of this.streams) {
      const moved = [...(this.bySubscriber.get(subscriber) ?? [])].filter((uri) => parseResourceUri(uri)?.documentId === documentId);
      if (moved.length === 0) continue;
      for (const stream of open) {
        try {
          const document = (await runTool(toolsByName.documents, stream.context, { action: "get", documentId })) as ToolOutput<
            "documents",
            { action: "get" }
          >;
          for (const uri of moved) {
            if ((parseResourceUri(uri)!.branchName ?? document.defaultBranch) !== branchName) continue;
            const notification = { jsonrpc: "2.0", method: "notifications/resources/updated", params: { uri } };
            stream.res.write(`event: message\ndata: ${JSON.stringify(notification)}\n\n`);
          }
        } catch (error) {
          // The subscriber may no longer read the document: it hears nothing of it.
          if (!isDomainError(error)) console.error("[quire] notifying a resource subscriber failed", error);
        }
      }
    }
  }
}
