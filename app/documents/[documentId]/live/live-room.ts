/**
 * Opening the branch's rooms from the browser (README, "Live collaboration"):
 * y-websocket providers on the app's own origin, authenticated by the session
 * cookie (or a share link's token, read only). `useNearViewport` tells a
 * section when it comes near the screen and when it is far away again, so a
 * long document opens a room and mounts editors only for what is on screen
 * (see ViewportWatch). When the server refuses a change it undoes it and
 * closes the socket saying why; the person is told, and the provider
 * reconnects by itself.
 */
import { type RefObject, useEffect, useState } from "react";
import type { Awareness } from "y-protocols/awareness";
import { WebsocketProvider } from "y-websocket";
import type * as Y from "yjs";

export interface RoomAddress {
  documentId: string;
  branchName: string;
  /** A share link's token: the rooms are then joined read only through it. */
  shareToken?: string;
}

/** The branch was deleted (`documents` action `delete_branch`) while this page had it open. */
const BRANCH_DELETED = 4410;
/**
 * Close codes the server uses for "you may no longer see this" (4403), "this section left the branch" (4404) and "this
 * branch was deleted" (4410): do not reconnect.
 */
const FINAL_CLOSE_CODES = new Set([4403, 4404, BRANCH_DELETED]);
/** The server refused an update (a limit or rule it breaks, named in the close reason) and sent the change that undoes it. */
const CHANGE_REFUSED = 4400;
/** WebSocket "message too big": an update over the server's 4 MiB. */
const MESSAGE_TOO_BIG = 1009;

/** How long a refusal (of the server, or of an editor before sending) stays in the toast: it is a sentence or two to read. */
export const REFUSAL_SHOWN_MS = 15_000;

/** What the person is told when a socket closes over something they sent; null when the close is not about that. */
function refusalMessage(event: { code: number; reason: string }): string | null {
  if (event.code === CHANGE_REFUSED) {
    return `Your last change here was not saved and has been undone${event.reason ? ` — ${event.reason}` : ""}.`;
  }
  if (event.code === BRANCH_DELETED) {
    return "This branch was deleted, so nothing typed here from now on is saved. Open the document's default branch to keep working.";
  }
  if (event.code === MESSAGE_TOO_BIG) {
    return "Your last change here was too large to send (more than 4 MiB) and was not saved — split it across blocks or upload it as a file.";
  }
  return null;
}

/** `refused` hears why the server refused something this page sent (refusalMessage). */
export function openRoom(address: RoomAddress, doc: Y.Doc, sectionId?: string, refused?: (message: string) => void): WebsocketProvider {
  const origin = `${window.location.protocol === "https:" ? "wss:" : "ws:"}//${window.location.host}/collab`;
  const room = `${address.documentId}/${encodeURIComponent(address.branchName)}${sectionId ? `/~${sectionId}` : ""}`;
  const provider = new WebsocketProvider(origin, room, doc, {
    params: address.shareToken ? { share: address.shareToken } : {},
    // Every tab goes through the server, which decides what each may see; no tab-to-tab channel around it.
    disableBc: true,
    maxBackoffTime: 2_500,
  });
  if (sectionId) provider.on("status", ({ status }) => status === "connected" && sectionRoomConnected(address.documentId));
  provider.on("status", ({ status }) => status === "disconnected" && forgetPresenceOfThoseGone(provider.awareness));
  provider.on("connection-close", (event) => {
    if (!event) return;
    if (FINAL_CLOSE_CODES.has(event.code)) provider.shouldConnect = false;
    const message = refusalMessage(event);
    if (message && refused) refused(message);
  });
  return provider;
}

/**
 * After a disconnect y-websocket removes everyone else's presence but keeps
 * the clocks it last heard, and the server greets the reconnected socket
 * with everyone's presence at those same clocks, which y-protocols ignores
 * as not newer (yjs/y-websocket#122): the others would show again only at
 * their next renewal, up to 15 s on. Forgetting the clocks of those the
 * disconnect removed lets the greeting bring them back at once; nothing
 * from the closed socket can arrive after it to be mistaken for newer.
 */
export function forgetPresenceOfThoseGone(awareness: Awareness): void {
  for (const clientId of [...awareness.meta.keys()])
    if (clientId !== awareness.clientID && !awareness.states.has(clientId)) awareness.meta.delete(clientId);
}

/**
 * The outline room waits for the section rooms a page opens as it starts: a
 * browser opens one WebSocket to a host at a time (RFC 6455 §4.1: another
 * waits until the handshake before it is answered, and the server answers
 * after checking the credential and the room), and the sections on screen
 * are what the person is waiting to read live and type in, while the outline
 * only follows later changes to the order the page was rendered with
 * (whatever changed meanwhile arrives when it syncs). It opens once a section
 * room of the document has connected (the other sections near the screen
 * asked before it and connect first), or after OUTLINE_WAITS_MS when none
 * does, as when no section is near the screen. bench/README, "The editor in
 * the browser", has the figures.
 */
const OUTLINE_WAITS_MS = 1_000;
const waitingOutlines = new Map<string, Set<() => void>>();

function sectionRoomConnected(documentId: string): void {
  const waiting = waitingOutlines.get(documentId);
  waitingOutlines.delete(documentId);
  for (const open of waiting ?? []) open();
}

/** Runs `open` (the outline room's opening) once a section room of the document has connected, or OUTLINE_WAITS_MS from now; the returned function cancels it. */
export function afterSectionRooms(documentId: string, open: () => void): () => void {
  let done = false;
  const once = () => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    waitingOutlines.get(documentId)?.delete(once);
    open();
  };
  const timer = setTimeout(once, OUTLINE_WAITS_MS);
  const waiting = waitingOutlines.get(documentId) ?? new Set();
  waiting.add(once);
  waitingOutlines.set(documentId, waiting);
  return () => {
    done = true;
    clearTimeout(timer);
    waitingOutlines.get(documentId)?.delete(once);
  };
}

type Watcher = (near: boolean) => void;

/** How far off screen a section counts as near: its room opens this much before it scrolls into view. */
const NEAR_MARGIN_PX = 400;
const NEAR_MARGIN = `${NEAR_MARGIN_PX}px 0px`;
/** How long a section stays mounted after it went out of reach, so scrolling back and forth does not churn rooms. */
const FAR_AFTER_MS = 5_000;

/**
 * Which sections are near the screen, for the whole page, with one
 * IntersectionObserver: a section is near as soon as it comes within
 * NEAR_MARGIN of the screen, and far once it has stayed out of reach for
 * FAR_AFTER_MS. Every target costs the browser work on every frame, so the
 * observer watches the sections' chunks (section-chunks.ts), a few dozen,
 * and the sections only of the chunks within reach; a chunk going out of
 * reach takes its sections with it.
 */
class ViewportWatch {
  private readonly watchers = new Map<Element, Watcher>();
  /** The watched sections of each chunk, and whether the chunk is within reach. */
  private readonly chunks = new Map<Element, { sections: Set<Element>; reachable: boolean }>();
  private readonly near = new Set<Element>();
  private readonly leaving = new Map<Element, ReturnType<typeof setTimeout>>();
  private readonly observer = new IntersectionObserver(
    (entries) => {
      for (const { target, isIntersecting } of entries) {
        const chunk = this.chunks.get(target);
        if (chunk) this.chunkReach(chunk, isIntersecting);
        else this.report(target, isIntersecting);
      }
    },
    { rootMargin: NEAR_MARGIN },
  );

  private chunkReach(chunk: { sections: Set<Element>; reachable: boolean }, reachable: boolean) {
    if (chunk.reachable === reachable) return;
    chunk.reachable = reachable;
    for (const section of chunk.sections) {
      if (reachable) this.observer.observe(section);
      else {
        this.observer.unobserve(section);
        this.report(section, false);
      }
    }
  }

  private report(target: Element, reachable: boolean) {
    const watcher = this.watchers.get(target);
    if (!watcher) return;
    clearTimeout(this.leaving.get(target));
    this.leaving.delete(target);
    if (reachable) {
      this.near.add(target);
      watcher(true);
    } else if (this.near.has(target)) {
      this.leaving.set(
        target,
        setTimeout(() => {
          this.leaving.delete(target);
          this.near.delete(target);
          watcher(false);
        }, FAR_AFTER_MS),
      );
    }
  }

  watch(section: Element, watcher: Watcher): () => void {
    this.watchers.set(section, watcher);
    const chunkElement = section.parentElement?.closest(".section-chunk") ?? null;
    let chunk = chunkElement ? this.chunks.get(chunkElement) : undefined;
    if (chunkElement && !chunk) {
      // Asked of the chunk's box, never of a section in a chunk the browser skips: that would make it lay the chunk out.
      chunk = { sections: new Set(), reachable: withinReach(chunkElement) };
      this.chunks.set(chunkElement, chunk);
      this.observer.observe(chunkElement);
    }
    chunk?.sections.add(section);
    // Outside a chunk, or in one within reach, the section itself is watched; and told at once where it is, not a frame or two
    // later when the observer first reports, so the sections on screen when the page starts render themselves at once.
    if (!chunk || chunk.reachable) {
      this.observer.observe(section);
      if (withinReach(section)) this.report(section, true);
    }
    return () => {
      this.watchers.delete(section);
      this.near.delete(section);
      clearTimeout(this.leaving.get(section));
      this.leaving.delete(section);
      this.observer.unobserve(section);
      if (chunkElement && chunk) {
        chunk.sections.delete(section);
        if (chunk.sections.size === 0) {
          this.chunks.delete(chunkElement);
          this.observer.unobserve(chunkElement);
        }
      }
    };
  }
}

/** Whether an element is within NEAR_MARGIN of the screen now (read from layout, which is clean once the page has rendered). */
function withinReach(element: Element): boolean {
  const box = element.getBoundingClientRect();
  return box.bottom >= -NEAR_MARGIN_PX && box.top <= window.innerHeight + NEAR_MARGIN_PX;
}

let viewportWatch: ViewportWatch | undefined;

export function useNearViewport(ref: RefObject<Element | null>): boolean {
  const [near, setNear] = useState(false);
  useEffect(() => {
    const element = ref.current;
    if (!element) return;
    viewportWatch ??= new ViewportWatch();
    return viewportWatch.watch(element, setNear);
  }, [ref]);
  return near;
}
