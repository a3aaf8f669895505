/**
 * Opening the branch's rooms from the browser (README, "Live collaboration"):
 * y-websocket providers on the app's own origin, authenticated by the session
 * cookie (or a share link's token, read only). `useNearViewport` tells a
 * section when it comes near the screen and when it is far away again, so a
 * long document opens a room and mounts editors only for what is on screen:
 * all sections share one IntersectionObserver.
 */
import { type RefObject, useEffect, useState } from "react";
import { WebsocketProvider } from "y-websocket";
import type * as Y from "yjs";

export interface RoomAddress {
  documentId: string;
  branchName: string;
  /** A share link's token: the rooms are then joined read only through it. */
  shareToken?: string;
}

/** Close codes the server uses for "you may no longer see this" (4403) and "this section left the branch" (4404): do not reconnect. */
const FINAL_CLOSE_CODES = new Set([4403, 4404]);

export function openRoom(address: RoomAddress, doc: Y.Doc, sectionId?: string): WebsocketProvider {
  const origin = `${window.location.protocol === "https:" ? "wss:" : "ws:"}//${window.location.host}/collab`;
  const room = `${address.documentId}/${encodeURIComponent(address.branchName)}${sectionId ? `/~${sectionId}` : ""}`;
  const provider = new WebsocketProvider(origin, room, doc, {
    params: address.shareToken ? { share: address.shareToken } : {},
    // Every tab goes through the server, which decides what each may see; no tab-to-tab channel around it.
    disableBc: true,
    maxBackoffTime: 2_500,
  });
  provider.on("connection-close", (event) => {
    if (event && FINAL_CLOSE_CODES.has(event.code)) provider.shouldConnect = false;
  });
  return provider;
}

type Watcher = (near: boolean) => void;

/** How far off screen a section counts as near: its room opens this much before it scrolls into view. */
const NEAR_MARGIN = "400px 0px";
/** How long a section stays mounted after it went out of reach, so scrolling back and forth does not churn rooms. */
const FAR_AFTER_MS = 5_000;

/**
 * One observer for the whole page: a section is near as soon as it comes
 * within NEAR_MARGIN of the screen, and far once it has stayed out of reach
 * for FAR_AFTER_MS. One observer rather than two (near, and a wider one for
 * far): every target costs the browser work on every frame, and the page's
 * content-visibility already has the browser track each section once.
 */
class ViewportWatch {
  private readonly watchers = new Map<Element, Watcher>();
  private readonly near = new Set<Element>();
  private readonly leaving = new Map<Element, ReturnType<typeof setTimeout>>();
  private readonly observer = new IntersectionObserver((entries) => this.report(entries), { rootMargin: NEAR_MARGIN });

  private report(entries: IntersectionObserverEntry[]) {
    for (const { target, isIntersecting } of entries) {
      const watcher = this.watchers.get(target);
      if (!watcher) continue;
      clearTimeout(this.leaving.get(target));
      this.leaving.delete(target);
      if (isIntersecting) {
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
  }

  watch(element: Element, watcher: Watcher): () => void {
    this.watchers.set(element, watcher);
    this.observer.observe(element);
    return () => {
      this.watchers.delete(element);
      this.near.delete(element);
      clearTimeout(this.leaving.get(element));
      this.leaving.delete(element);
      this.observer.unobserve(element);
    };
  }
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
