/**
 * Who is on the branch, as the page sees it: the awareness of every section
 * room it has open (each peer publishes `user: {userId, name, color,
 * colorLight}`), plus the server's list of connected users for the rooms
 * this page has not opened. A person's colour comes from their user id, so
 * it is the same on every screen.
 *
 * Peers' awareness is anyone's to write: y-codemirror.next puts a peer's
 * `user.color` and `user.colorLight` into a style attribute, where a value
 * such as `red; background-image:url(…)` would make the page fetch a URL.
 * The editors therefore see the rooms through `withSafeColours`, in which a
 * colour that is not `#rrggbb` is replaced by a neutral grey; and the page
 * publishes `#rrggbb` colours itself (the server passes nothing else).
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

/** The one colour form awareness may carry: it cannot hold anything but a colour. */
const HEX_COLOUR = /^#[0-9a-fA-F]{6}$/;
/** A peer's colours when theirs are not `#rrggbb`. */
const NEUTRAL_COLOURS = { color: "#6e7781", colorLight: "#e2e4e6" };

/**
 * A hue spread over the whole circle by an FNV-1a hash of the id; saturation and lightness keep white name labels readable.
 * The selection colour is the same colour at 20% over white, opaque, so it too is a `#rrggbb`.
 */
export function userColor(userId: string): { color: string; colorLight: string } {
  const hue = fnv1a(userId) % 360;
  const rgb = hslToRgb(hue, 0.62, 0.38);
  return { color: hex(rgb), colorLight: hex(rgb.map((channel) => 255 - (255 - channel) * 0.2)) };
}

function hslToRgb(hue: number, saturation: number, lightness: number): number[] {
  const amplitude = saturation * Math.min(lightness, 1 - lightness);
  const channel = (n: number) => {
    const k = (n + hue / 30) % 12;
    return 255 * (lightness - amplitude * Math.max(-1, Math.min(k - 3, 9 - k, 1)));
  };
  return [channel(0), channel(8), channel(4)];
}

const hex = (rgb: number[]): string => `#${rgb.map((channel) => Math.round(channel).toString(16).padStart(2, "0")).join("")}`;

export function presentUser(userId: string, name: string): PresentUser {
  return { userId, name, ...userColor(userId) };
}

type AwarenessState = Record<string, unknown>;

/** A peer's state with `#rrggbb` colours only (the same object when they already are). */
function withSafeUserColours(state: AwarenessState): AwarenessState {
  const user = state.user;
  if (typeof user !== "object" || user === null) return state;
  const { color, colorLight } = user as { color?: unknown; colorLight?: unknown };
  const safe = (value: unknown, neutral: string) => (typeof value === "string" && HEX_COLOUR.test(value) ? value : neutral);
  const safeColor = safe(color, NEUTRAL_COLOURS.color);
  const safeColorLight = safe(colorLight, NEUTRAL_COLOURS.colorLight);
  return safeColor === color && safeColorLight === colorLight
    ? state
    : { ...state, user: { ...user, color: safeColor, colorLight: safeColorLight } };
}

/**
 * A room's awareness as an editor may see it: the same object, except that `getStates()` answers every state with
 * `#rrggbb` colours (withSafeUserColours). Each state is checked once: a peer's update replaces its state object.
 */
export function withSafeColours(awareness: Awareness): Awareness {
  const checked = new WeakMap<AwarenessState, AwarenessState>();
  const safeState = (state: AwarenessState) => {
    const known = checked.get(state);
    if (known) return known;
    const safe = withSafeUserColours(state);
    checked.set(state, safe);
    return safe;
  };
  const getStates = () => new Map([...awareness.getStates()].map(([clientId, state]) => [clientId, safeState(state)]));
  return new Proxy(awareness, { get: (target, key) => (key === "getStates" ? getStates : Reflect.get(target, key, target)) });
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
