/**
 * Opening the branch's rooms from the browser (README, "Live collaboration"):
 * y-websocket providers on the app's own origin, authenticated by the session
 * cookie (or a share link's token, read only). `useNearViewport` tells a
 * section when it comes near the screen and when it is far away again, so a
 * long document opens a room and mounts editors only for what is on screen:
 * all sections share two IntersectionObservers.
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

/** Two observers for the whole page: one says "near" (mount), the other "far" (unmount); between them nothing changes, so scrolling back and forth does not churn rooms. */
class ViewportWatch {
  private readonly watchers = new Map<Element, Watcher>();
  private readonly near = new IntersectionObserver((entries) => this.report(entries, true), { rootMargin: "400px 0px" });
  private readonly far = new IntersectionObserver((entries) => this.report(entries, false), { rootMargin: "2400px 0px" });

  private report(entries: IntersectionObserverEntry[], near: boolean) {
    for (const entry of entries) {
      // "near" reports arrivals, "far" reports departures.
      if (near && entry.isIntersecting) this.watchers.get(entry.target)?.(true);
      if (!near && !entry.isIntersecting) this.watchers.get(entry.target)?.(false);
    }
  }

  watch(element: Element, watcher: Watcher): () => void {
    this.watchers.set(element, watcher);
    this.near.observe(element);
    this.far.observe(element);
    return () => {
      this.watchers.delete(element);
      this.near.unobserve(element);
      this.far.unobserve(element);
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
