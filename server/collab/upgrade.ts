/**
 * The WebSocket upgrade to a room: `/collab/<documentId>/<branch>` (the
 * outline) or `.../~<sectionId>`. The credential the transport found is
 * decided by the one authorize (server/access/authorize.ts): the document to
 * at least read, the branch, and for a section room the section visible on
 * the branch head. A refusal is a plain HTTP answer before any WebSocket or
 * Yjs byte (a hidden section is 404, as a missing one); an admitted socket
 * becomes a RoomConnection with the presence the server stamps on it.
 */
import { type IncomingMessage, STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer } from "ws";
import type { Database } from "@/db/client";
import type { Authorizer, Credential } from "@/server/access/authorize";
import type { Actor } from "@/server/access/actor";
import type { DocumentAccess } from "@/server/access/documents";
import { visibleSectionIds } from "@/server/access/sections";
import { DomainError, ERROR_FACES, isDomainError } from "@/server/core/errors";
import { MAX_LIVE_MESSAGE_BYTES } from "@/server/core/limits";
import { getBranch } from "@/server/store/documents";
import { userIdentities } from "@/server/store/users";
import { CLOSE_INTERNAL, type RoomAddress, RoomConnection } from "./connection";
import { branchHead } from "./drafts-engine";
import type { PresenceIdentity } from "./presence";
import type { SharedDecisions } from "./shared-values";
import { coalesceWrites, flushTurnWrites } from "./turn-writes";

/** Who a connection is, what it may do, and the branch head that was decided on. */
interface Admission {
  actor: Actor | null;
  access: DocumentAccess;
  headCommitId: string;
}

export class LiveUpgrade {
  // A larger message closes its socket with 1009 (Message Too Big), before it is buffered whole.
  private readonly sockets = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: MAX_LIVE_MESSAGE_BYTES });
  /** Set by `terminateAll`: the process is closing, and a socket admitted now would keep its HTTP server from closing. */
  private closing = false;

  constructor(
    private readonly db: Database,
    private readonly authorize: Authorizer,
    private readonly decisions: SharedDecisions,
    /** Takes an admitted connection into its room (it is paused until then), with the branch head it was admitted on. */
    private readonly attach: (connection: RoomConnection, admittedHead: string) => Promise<void>,
  ) {}

  /** Decides an upgrade: refused with an HTTP status (before any Yjs byte), or the socket handed to its room. */
  async upgrade(
    request: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    credential: Credential | null,
    address: RoomAddress,
    refusal?: DomainError,
  ): Promise<void> {
    // No reads for a process that is closing (its database is next).
    if (this.refusedAsClosing(socket)) return;
    let admitted: Admission;
    let presence: PresenceIdentity;
    try {
      if (refusal) throw refusal;
      if (!credential) throw new DomainError("UNAUTHENTICATED", "Sign in, or pass an API token as `token` or a share link as `share`.");
      admitted = await this.admit(credential, address);
      presence = await this.presenceOf(admitted.actor);
    } catch (error) {
      refuseUpgrade(socket, isDomainError(error) ? error : new DomainError("INTERNAL", "Internal error."));
      if (!isDomainError(error)) console.error("[quire] collab upgrade failed", error);
      return;
    }
    // Again after the admission's reads: a client reconnecting as the sockets are cut (every open editor does) may have
    // been admitted while the close went on. An upgraded socket is no longer the HTTP server's to close, and one
    // admitted now would keep it open for good.
    if (this.refusedAsClosing(socket)) return;
    this.sockets.handleUpgrade(request, socket, head, (ws) => {
      // Messages wait in the socket until the room is open (attach reads them).
      ws.pause();
      // ws closes the socket itself on a protocol error (1009 for a message past maxPayload, 1002 for a bad frame) and then
      // emits the error: without a listener, that emit would throw out of the server.
      ws.on("error", ignoreError);
      coalesceWrites(ws, socket);
      const { decisions } = this;
      const connection = new RoomConnection(
        ws,
        decisions.credential(credential),
        decisions.actor(admitted.actor),
        decisions.access(admitted.access),
        decisions.address(address),
        decisions.presence(presence),
      );
      void this.attach(connection, admitted.headCommitId).catch((error: unknown) => {
        console.error("[quire] collab room failed to open", error);
        ws.close(CLOSE_INTERNAL, "room failed to open");
      });
    });
  }

  /** The principal's access, checked to at least read the document, branch and (for a section room) the section. */
  private async admit(credential: Credential, address: RoomAddress): Promise<Admission> {
    const { actor, access } = await this.authorize.document(credential, address.documentId, "read");
    // Either read fails with NOT_FOUND when there is no such branch.
    if (address.sectionId === null) {
      return { actor, access, headCommitId: (await getBranch(this.db, address.documentId, address.branchName)).headCommitId };
    }
    const head = await branchHead(this.db, address);
    if (!(await visibleSectionIds(this.db, access, address.branchName, head.tree)).includes(address.sectionId)) {
      throw new DomainError("NOT_FOUND", `No section ${address.sectionId} in this document on this branch.`);
    }
    return { actor, access, headCommitId: head.commitId };
  }

  /** Who a connection's presence shows: the account's name (an agent's marked as such), or a guest for a share link. */
  private async presenceOf(actor: Actor | null): Promise<PresenceIdentity> {
    if (!actor) return { userId: null, name: "Guest (share link)" };
    const name = (await userIdentities(this.db, [actor.userId])).get(actor.userId)?.name ?? "";
    return { userId: actor.userId, name: actor.principal === "agent" ? `${name} (agent)` : name };
  }

  /** Answers 503 if the process is closing (see `closing`); whether it did. */
  private refusedAsClosing(socket: Duplex): boolean {
    if (this.closing) refuseUpgrade(socket, CLOSING, 503);
    return this.closing;
  }

  /** Cuts every socket and admits no more (the process is closing). */
  terminateAll(): void {
    this.closing = true;
    // What this turn wrote goes out first: a corked socket drops its buffered writes when destroyed.
    flushTurnWrites();
    for (const client of this.sockets.clients) client.terminate();
  }

  close(): void {
    this.sockets.close();
  }
}

/** A room socket's error listener (ws has closed it already). Not an arrow: that would keep the upgrade's scope (its decision) alive with the socket. */
function ignoreError(): void {}

/** What an upgrade that arrives while the process closes is told: its client retries, and reaches a process that serves. */
const CLOSING = new DomainError("INTERNAL", "This server is shutting down; connect again in a moment.");

/** Answers a refused upgrade with a plain HTTP response, before any WebSocket or Yjs byte. */
function refuseUpgrade(socket: Duplex, error: DomainError, status: number = ERROR_FACES[error.code].http): void {
  const body = JSON.stringify({ error: error.toPayload() });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? "Refused"}\r\n` +
      `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

/** `/collab/<documentId>/<branchName>` (the outline) or `/collab/<documentId>/<branchName>/~<sectionId>`; null for any other path. */
export function parseRoomPath(pathname: string): RoomAddress | null {
  const match = /^\/collab\/([0-9a-f-]{36})\/(.+?)(?:\/~([0-9a-f-]{36}))?$/i.exec(pathname);
  if (!match) return null;
  let branchName: string;
  try {
    branchName = decodeURIComponent(match[2]!);
  } catch {
    return null;
  }
  return { documentId: match[1]!.toLowerCase(), branchName, sectionId: match[3]?.toLowerCase() ?? null };
}
