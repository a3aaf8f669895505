/**
 * Presence (y-protocols awareness) as the server passes it on: each state is
 * stamped with who the connection is — a client cannot show itself as
 * someone else — and rebuilt from the one shape Quire's editor publishes,
 * `{ user: { userId, name, color, colorLight }, cursor }`, so nothing else a
 * client puts there (a colour that is CSS with a URL in it, a megabyte of
 * JSON) reaches anyone's browser. A connection speaks only for the awareness
 * client ids it introduced.
 *
 * Pure: the update's wire format (y-protocols' encodeAwarenessUpdate) in,
 * the stamped one out.
 */
import * as decoding from "lib0/decoding";
import * as encoding from "lib0/encoding";
import { z } from "zod";
import { encode } from "./encode";

/** Who a connection's presence is shown as, whatever its client says. */
export interface PresenceIdentity {
  /** null for a share-link visitor, who has no account. */
  userId: string | null;
  name: string;
}

/** A colour and nothing else: hex, or rgb()/hsl() of plain numbers (what browsers' colour pickers and Quire's editor write). */
const COLOUR = /^(?:#[0-9a-f]{3,8}|(?:rgb|hsl)a?\(\s*[\d.]+(?:deg)?%?(?:\s*[\s,/]\s*[\d.]+%?){2,3}\s*\))$/i;
/** Shown for a colour the server will not pass on. */
export const NEUTRAL_COLOUR = "#6b7280";
const NEUTRAL_COLOUR_LIGHT = "#6b728033";

/** A Yjs item id inside a relative position. */
const yjsId = z.strictObject({ client: z.number().int().nonnegative(), clock: z.number().int().nonnegative() });
/** `Y.relativePositionToJSON`'s shape, which y-codemirror.next publishes as a cursor's anchor and head. */
const relativePosition = z.strictObject({
  type: yjsId.nullable().optional(),
  tname: z.string().max(64).nullable().optional(),
  item: yjsId.nullable().optional(),
  assoc: z.number().int().min(-1).max(1).optional(),
});
const cursorSchema = z.strictObject({ anchor: relativePosition, head: relativePosition }).nullable();

const colourOr = (value: unknown, fallback: string): string =>
  typeof value === "string" && value.length <= 64 && COLOUR.test(value) ? value : fallback;

/** The state as passed on: the connection's identity, the client's colours if they are colours, its cursor if it is one. */
export function stampState(state: unknown, identity: PresenceIdentity): Record<string, unknown> | null {
  if (state === null || typeof state !== "object") return null;
  const claimed = (state as { user?: { color?: unknown; colorLight?: unknown } }).user;
  const stamped: Record<string, unknown> = {
    user: {
      userId: identity.userId,
      name: identity.name,
      color: colourOr(claimed?.color, NEUTRAL_COLOUR),
      colorLight: colourOr(claimed?.colorLight, NEUTRAL_COLOUR_LIGHT),
    },
  };
  const cursor = cursorSchema.safeParse((state as { cursor?: unknown }).cursor);
  if (cursor.success && cursor.data !== undefined) stamped.cursor = cursor.data;
  return stamped;
}

/**
 * Rewrites an awareness update from a connection: entries for client ids
 * `mayControl` refuses are dropped, every other state is stamped. Returns
 * null when nothing is left. Throws on bytes that are not an awareness update
 * (the caller closes the connection, as for any malformed message).
 */
export function stampAwarenessUpdate(
  update: Uint8Array,
  identity: PresenceIdentity,
  mayControl: (clientId: number) => boolean,
): Uint8Array | null {
  const decoder = decoding.createDecoder(update);
  const entries: Array<{ clientId: number; clock: number; state: string }> = [];
  const count = decoding.readVarUint(decoder);
  for (let i = 0; i < count; i++) {
    const clientId = decoding.readVarUint(decoder);
    const clock = decoding.readVarUint(decoder);
    const json = decoding.readVarString(decoder);
    if (!mayControl(clientId)) continue;
    let state: unknown;
    try {
      state = JSON.parse(json);
    } catch {
      continue;
    }
    entries.push({ clientId, clock, state: JSON.stringify(stampState(state, identity)) });
  }
  if (entries.length === 0) return null;
  return encode((encoder) => {
    encoding.writeVarUint(encoder, entries.length);
    for (const entry of entries) {
      encoding.writeVarUint(encoder, entry.clientId);
      encoding.writeVarUint(encoder, entry.clock);
      encoding.writeVarString(encoder, entry.state);
    }
  });
}
