/**
 * Equal decisions held once (docs/architecture.md, "Live collaboration":
 * memory per idle room). Every connection of a room is admitted and decided
 * on its own, and each decision comes back as fresh objects: the principal's
 * actor, its presence, its credential, the room's address, and its access
 * (the document row with its dates, the subject, the facts). A browser holds
 * an outline and several section rooms of one document, and a process holds
 * thousands of connections, most of them of few principals; kept as they
 * came, those copies were most of a connection's memory.
 *
 * This is no cache: nothing here decides anything or answers for a decision
 * not made. Every connection is still admitted and decided again (on every
 * head move and access change) exactly as before; only what a decision
 * returned is replaced by an equal value already held (equal as JSON: plain
 * data, dates by their instant), and dropped when no connection holds it
 * any more. An access keeps its own identity (per-access memos such as the
 * default head's hiding are keyed by it and must not outlive a decision);
 * only its parts are shared.
 */
import type { Credential } from "@/server/access/authorize";
import type { Actor } from "@/server/access/actor";
import type { DocumentAccess } from "@/server/access/documents";
import type { RoomAddress } from "./connection";
import type { PresenceIdentity } from "./presence";

/** Values by their JSON: the first one held stands for every equal one, while anything holds it. */
export class EqualValues {
  private readonly held = new Map<string, WeakRef<object>>();
  private readonly dropped = new FinalizationRegistry<string>((json) => {
    if (this.held.get(json)?.deref() === undefined) this.held.delete(json);
  });

  /** The value already held that is equal to `value` (by `json`, its JSON unless given), or `value` itself, now held. */
  shared<T extends object>(value: T, json = JSON.stringify(value)): T {
    const known = this.held.get(json)?.deref();
    if (known) return known as T;
    this.held.set(json, new WeakRef(value));
    this.dropped.register(value, json);
    return value;
  }

  /** How many distinct values are held (for the tests). */
  get size(): number {
    return this.held.size;
  }
}

/** What a connection is admitted with, its parts shared (see above). */
export class SharedDecisions {
  private readonly values = new EqualValues();

  /** The same access object, its document row, subject and facts replaced by equal ones already held. */
  access(access: DocumentAccess): DocumentAccess {
    access.document = this.values.shared(access.document);
    access.subject = this.values.shared(access.subject);
    access.facts = this.values.shared(access.facts);
    return access;
  }

  actor(actor: Actor | null): Actor | null {
    return actor && this.values.shared(actor);
  }

  presence(presence: PresenceIdentity): PresenceIdentity {
    return this.values.shared(presence);
  }

  credential(credential: Credential): Credential {
    return this.values.shared(credential);
  }

  address(address: RoomAddress): RoomAddress {
    return this.values.shared(address);
  }

  /** A set of storage keys (a section connection's usable keys), equal to another by its members. */
  keys(keys: ReadonlySet<string>): ReadonlySet<string> {
    return this.values.shared(keys, `keys ${JSON.stringify([...keys].sort())}`);
  }
}
