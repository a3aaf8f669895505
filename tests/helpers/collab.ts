/** Real y-websocket providers against a started Quire server, with the frames each receives recorded. */
import WebSocket from "ws";
import { WebsocketProvider } from "y-websocket";
import * as Y from "yjs";
import type { Database } from "@/db/client";
import { sectionFromYDoc } from "@/server/collab/codec";
import { branchHead, docFromStored, loadOrCreateSectionDraft } from "@/server/collab/drafts-engine";
import { appendDraftUpdates, ensureDraft } from "@/server/store/drafts";

export interface LiveClient {
  doc: Y.Doc;
  provider: WebsocketProvider;
  /** Every binary frame this client received, in order. */
  frames: Buffer[];
  /** The first text block of the section this client edits. */
  text(): Y.Text;
  /** The section as this client sees it. */
  section(): ReturnType<typeof sectionFromYDoc>;
  close(): void;
}

export const roomName = (documentId: string, branchName: string, sectionId?: string): string =>
  `${documentId}/${encodeURIComponent(branchName)}${sectionId ? `/~${sectionId}` : ""}`;

/** Connects a provider and waits until it synced with the server. */
export async function connectLive(
  serverUrl: string,
  room: string,
  params: Record<string, string>,
  options: { headers?: Record<string, string>; sync?: boolean } = {},
): Promise<LiveClient> {
  const frames: Buffer[] = [];
  class RecordingSocket extends WebSocket {
    constructor(url: string, protocols?: string | string[]) {
      super(url, protocols, { headers: options.headers });
      this.on("message", (data: Buffer) => frames.push(Buffer.from(data)));
    }
  }
  const doc = new Y.Doc();
  const provider = new WebsocketProvider(`${serverUrl.replace(/^http/, "ws")}/collab`, room, doc, {
    WebSocketPolyfill: RecordingSocket as unknown as typeof globalThis.WebSocket,
    params,
    disableBc: true,
    maxBackoffTime: 200,
  });
  if (options.sync !== false) await waitFor(() => provider.synced, 5_000, `sync of ${room}`);
  const blocks = () => doc.getMap("section").get("blocks") as Y.Array<Y.Map<unknown>>;
  return {
    doc,
    provider,
    frames,
    text: () => blocks().get(0).get("text") as Y.Text,
    section: () => sectionFromYDoc(doc),
    close: () => {
      provider.destroy();
      doc.destroy();
    },
  };
}

/** Polls `condition` (which may ask the server: then it resolves) every 5 ms until it holds; throws after `timeoutMs`. */
export async function waitFor(condition: () => boolean | Promise<boolean>, timeoutMs = 5_000, what = "condition"): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** The HTTP status an upgrade to `room` is answered with (101 when it is accepted). */
export function upgradeStatus(
  serverUrl: string,
  room: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${serverUrl.replace(/^http/, "ws")}/collab/${room}`, { headers });
    ws.on("unexpected-response", (_req, res) => {
      let body = "";
      res.on("data", (c: Buffer) => {
        body += c.toString();
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    ws.on("open", () => {
      ws.close();
      resolve({ status: 101, body: "" });
    });
    ws.on("error", (e) => {
      if (!String(e).includes("Unexpected server response")) reject(e);
    });
  });
}

/**
 * Changes a section's stored draft directly, as no face of the server would let anyone (a draft stored before the
 * live face checked what it is sent may hold anything): what reads a draft must cope with whatever it holds. Done
 * before any room of the section is open, which loads it.
 */
export async function corruptDraft(
  db: Database,
  at: { documentId: string; branchName: string; sectionId: string; authorId: string },
  change: (section: Y.Map<unknown>) => void,
): Promise<void> {
  const branch = { documentId: at.documentId, branchName: at.branchName };
  const head = await branchHead(db, branch);
  await ensureDraft(db, branch, head.commitId);
  const key = { ...branch, sectionId: at.sectionId };
  const doc = docFromStored(await loadOrCreateSectionDraft(db, key, head.tree));
  const before = Y.encodeStateVector(doc);
  doc.transact(() => change(doc.getMap("section")));
  await appendDraftUpdates(db, [{ ...key, update: Y.encodeStateAsUpdate(doc, before), authorId: at.authorId }]);
  doc.destroy();
}

/** A block as a shared map of plain values (what a client puts into a section's `blocks`). */
export const blockMap = (fields: Record<string, unknown>): Y.Map<unknown> => {
  const map = new Y.Map<unknown>();
  for (const [field, value] of Object.entries(fields)) map.set(field, value);
  return map;
};
