/**
 * Who is on the branch, as the page sees it: the awareness of every section
 * room it has open (each peer publishes `user: {userId, name, color,
 * colorLight}`), plus the server's list of connected users for the rooms
 * this page has not opened. A person's colour comes from their user id, so
 * it is the same on every screen.
 */
import type { Awareness } from "y-protocols/awareness";
import { fnv1a } from "@/app/_lib/fnv1a";

export interface PresentUser {
  userId: string;
  name: string;
  color: string;
  /** The colour of their selections (y-codemirror.next reads `colorLight`). */
  colorLight: string;
}

/** A hue spread over the whole circle by an FNV-1a hash of the id; saturation and lightness keep white name labels readable. */
export function userColor(userId: string): { color: string; colorLight: string } {
  const hue = fnv1a(userId) % 360;
  return { color: `hsl(${hue} 62% 38%)`, colorLight: `hsl(${hue} 62% 38% / 0.2)` };
}

export function presentUser(userId: string, name: string): PresentUser {
  return { userId, name, ...userColor(userId) };
}

function isPresentUser(value: unknown): value is PresentUser {
  const user = value as Partial<PresentUser> | null;
  return typeof user?.userId === "string" && typeof user.name === "string";
}

/** The awareness of each open section room; people are listed once however many sections they are in. */
export class PresenceHub {
  private readonly rooms = new Map<string, Awareness>();
  private readonly listeners = new Set<() => void>();
  private snapshot: PresentUser[] = [];
  private readonly changed = () => this.recompute();

  track(sectionId: string, awareness: Awareness): () => void {
    this.rooms.set(sectionId, awareness);
    awareness.on("change", this.changed);
    this.recompute();
    return () => {
      awareness.off("change", this.changed);
      if (this.rooms.get(sectionId) === awareness) this.rooms.delete(sectionId);
      this.recompute();
    };
  }

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  /** For useSyncExternalStore: the same array until someone arrives or leaves. */
  getSnapshot = (): PresentUser[] => this.snapshot;

  private recompute(): void {
    const byId = new Map<string, PresentUser>();
    for (const awareness of this.rooms.values()) {
      for (const state of awareness.getStates().values()) {
        const user = (state as { user?: unknown }).user;
        if (isPresentUser(user) && !byId.has(user.userId)) byId.set(user.userId, presentUser(user.userId, user.name));
      }
    }
    const next = [...byId.values()].sort((a, b) => a.name.localeCompare(b.name));
    const same = next.length === this.snapshot.length && next.every((u, i) => u.userId === this.snapshot[i]!.userId);
    if (same) return;
    this.snapshot = next;
    for (const listener of this.listeners) listener();
  }
}
