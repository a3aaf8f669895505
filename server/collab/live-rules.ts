/**
 * What a connection may put into a section's live draft: what the `sections`
 * tool accepts of content it is sent — the block schema and its limits, text
 * PostgreSQL can store, the comment rules — judged on every transaction a
 * connection's update makes, over the parts of the section it changed (a
 * keystroke costs the block it lands in, not the section). Two states a
 * person passes through while typing are let in here and refused only at
 * commit, where the draft is judged whole by the `sections` rules: an empty
 * name, and content starting with the name as a heading.
 *
 * Pure: knows the section's Y.Doc and the typist, nothing of rooms or storage.
 */
import * as Y from "yjs";
import {
  type Block,
  blockSchema,
  firstLocalFileBlock,
  MAX_BLOCKS_PER_SECTION,
  MAX_TEXT_BLOCK_CHARS,
  storageKeysOf,
} from "@/server/core/blocks";
import { commentTagTokens, existingCommentTags, type NewCommentTag, newCommentTags } from "@/server/core/comment-markup";
import { isDomainError } from "@/server/core/errors";
import { isUnstorable } from "@/server/core/limits";
import { documentNameSchema } from "@/server/core/names";

/** Who is typing, as far as the rules care. */
export interface Typist {
  userId: string | null;
  /** Storage keys this principal may put into the section: those it can already see in the document. */
  mayUseKey(key: string): boolean;
}

/** What the rules remember of a block as last accepted: what an edit must keep, or may only add within limits. */
interface BlockMemory {
  /** Existing comments' elements, as written (an edit must keep each). */
  comments: readonly string[];
  /** Opening tags of new comments typed into the draft. */
  newComments: readonly string[];
  keys: readonly string[];
  /**
   * Whether its comment markup was well formed. A block a server-side change
   * left malformed (a revert meeting a comment typed at the same place) still
   * takes keystrokes — only an edit that breaks well-formed markup is refused —
   * and is refused at commit until someone mends it.
   */
  markupWellFormed: boolean;
}

const SECTION_ROOT = "section";
const NAME_KEY = "name";
const BLOCKS_KEY = "blocks";
const ALLOWED_ROOT_KEYS: ReadonlySet<string> = new Set([NAME_KEY, BLOCKS_KEY]);

/** A refusal: short enough for a WebSocket close reason (123 bytes), which is how the typist is told. */
export class LiveContentRefused extends Error {}

const refuse = (reason: string): never => {
  throw new LiveContentRefused(reason);
};

const ordinal = (index: number) => `block ${index + 1}`;

/** Elements of `before` missing from `after`, counting repeats (a multiset difference). */
function missingFrom(before: readonly string[], after: readonly string[]): string[] {
  const left = new Map<string, number>();
  for (const item of after) left.set(item, (left.get(item) ?? 0) + 1);
  const missing: string[] = [];
  for (const item of before) {
    const count = left.get(item) ?? 0;
    if (count === 0) missing.push(item);
    else left.set(item, count - 1);
  }
  return missing;
}

/**
 * The judge of one section doc. It remembers, per block, what the rules need
 * of the content as last accepted; `judge` checks a connection's transaction
 * against it (throwing LiveContentRefused), `follow` takes in a transaction
 * nobody judges (the server's own, another process's, an undo).
 */
export class SectionRules {
  private readonly memory = new Map<Y.Map<unknown>, BlockMemory>();
  private readonly root: Y.Map<unknown>;

  constructor(doc: Y.Doc) {
    this.root = doc.getMap(SECTION_ROOT);
    for (const block of this.blockMaps()) this.memory.set(block, this.remember(block));
  }

  /** Throws LiveContentRefused when the transaction leaves the section breaking a rule; otherwise remembers what it changed. */
  judge(transaction: Y.Transaction, typist: Typist): void {
    const { touched, reshaped } = this.touchedBlocks(transaction, true);
    // Typing changes no block's place or fields: the blocks are the ones remembered, and only the touched are read.
    const blocks = reshaped ? this.blockMaps() : null;
    if (blocks && blocks.length > MAX_BLOCKS_PER_SECTION) refuse(`a section holds at most ${MAX_BLOCKS_PER_SECTION} blocks`);
    const present = blocks ? new Set(blocks) : null;
    const before: BlockMemory[] = [];
    if (present) {
      for (const [block, known] of this.memory) if (touched.has(block) || !present.has(block)) before.push(known);
    } else
      for (const block of touched.keys()) {
        const known = this.memory.get(block);
        if (known) before.push(known);
      }
    const judged = new Map<Y.Map<unknown>, BlockMemory>();
    const typedComments: NewCommentTag[] = [];
    for (const [block, textOnly] of touched) {
      if (!(present ? present.has(block) : this.memory.has(block))) continue;
      // Where-functions inline, not a named const: tsx runs the server with esbuild's keepNames, which names each
      // function a `const` makes with a defineProperty, per keystroke here.
      const { memory, newComments } = textOnly
        ? this.judgeTyping(block, () => this.ordinalOf(block, blocks))
        : this.judgeBlock(block, () => this.ordinalOf(block, blocks));
      judged.set(block, memory);
      typedComments.push(...newComments);
    }
    const after = [...judged.values()];
    const commentsBefore = before.flatMap((m) => m.comments);
    const commentsAfter = after.flatMap((m) => m.comments);
    if (missingFrom(commentsBefore, commentsAfter).length > 0) refuse("an edit may not remove or alter a comment's markup");
    if (missingFrom(commentsAfter, commentsBefore).length > 0) refuse("comment markup may only name comments of this section");
    const keysAfter = after.flatMap((m) => m.keys);
    if (keysAfter.length > 0) {
      const keysBefore = new Set([...this.memory.values()].flatMap((m) => m.keys));
      if (keysAfter.some((key) => !keysBefore.has(key) && !typist.mayUseKey(key)))
        refuse("a storage key must name a file shown in this document (add new files with the sections tool)");
    }
    // Comments typed by this transaction (not there before) must name their typist, so a commit credits who wrote them.
    const typed = new Set(
      missingFrom(
        after.flatMap((m) => m.newComments),
        before.flatMap((m) => m.newComments),
      ),
    );
    if (typedComments.some((tag) => typed.has(tag.open) && (typist.userId === null || tag.author !== typist.userId)))
      refuse(`a new comment must carry author="<your user id>"`);
    // One typed into a block whose markup is malformed cannot be read for its author: it waits until the markup is mended.
    const read = new Set(typedComments.map((tag) => tag.open));
    if ([...typed].some((open) => !read.has(open))) refuse("a new comment needs well-formed comment markup around it");
    if (present) for (const block of this.memory.keys()) if (!present.has(block)) this.memory.delete(block);
    for (const [block, memory] of judged) this.memory.set(block, memory);
  }

  /** Takes in a transaction that is not judged, so the next judgement compares with what the section now is. */
  follow(transaction: Y.Transaction): void {
    const { touched, reshaped } = this.touchedBlocks(transaction, false);
    const present = reshaped ? new Set(this.blockMaps()) : null;
    for (const block of touched.keys())
      if (present ? present.has(block) : this.memory.has(block)) this.memory.set(block, this.remember(block));
    if (present) for (const block of this.memory.keys()) if (!present.has(block)) this.memory.delete(block);
  }

  private blockMaps(): Y.Map<unknown>[] {
    const blocks = this.root.get(BLOCKS_KEY);
    return blocks instanceof Y.Array ? blocks.toArray().filter((b): b is Y.Map<unknown> => b instanceof Y.Map) : [];
  }

  /**
   * The blocks a transaction changed, each with whether only its text did
   * (typing: the shared text of a text block, nothing else of it), and
   * whether it `reshaped` the section (its blocks, their order or a block's
   * fields); checking on the way (when `strict`) that it wrote nothing
   * outside the section's shape: another root, another key of the section, a
   * name that is not text.
   */
  private touchedBlocks(transaction: Y.Transaction, strict: boolean): { touched: Map<Y.Map<unknown>, boolean>; reshaped: boolean } {
    const blocksArray = this.root.get(BLOCKS_KEY);
    const touched = new Map<Y.Map<unknown>, boolean>();
    let reshaped = false;
    for (const [changed, keys] of transaction.changed) {
      const type: unknown = changed;
      if (type === this.root) {
        if (strict) {
          if (keys.has(null) || [...keys].some((key) => !ALLOWED_ROOT_KEYS.has(key!)))
            refuse("a section holds only its name and its blocks");
          if (!(this.root.get(NAME_KEY) instanceof Y.Text)) refuse("a section's name must be shared text");
          if (!(blocksArray instanceof Y.Array)) refuse("a section's blocks must be a shared array");
          if (keys.has(NAME_KEY)) this.judgeName();
        }
        if (keys.has(BLOCKS_KEY)) {
          reshaped = true;
          for (const block of this.blockMaps()) touched.set(block, false);
        }
        continue;
      }
      if (type === blocksArray) {
        reshaped = true;
        if (strict && (blocksArray as Y.Array<unknown>).toArray().some((b) => !(b instanceof Y.Map)))
          refuse("every block must be a shared map");
        for (const block of this.blockMaps()) if (!this.memory.has(block)) touched.set(block, false);
        continue;
      }
      if (type === this.root.get(NAME_KEY)) {
        if (strict) this.judgeName();
        continue;
      }
      const block = this.blockOf(type);
      if (!block) {
        if (strict && !this.attachedToRoot(type)) refuse("an edit may only change the section");
        continue;
      }
      const typing = type instanceof Y.Text && type.parent === block && block.get("text") === type && block.get("blockType") === "text";
      if (!typing) {
        reshaped = true;
        touched.set(block, false);
      } else if (!touched.has(block)) touched.set(block, true);
    }
    return { touched, reshaped };
  }

  /** "block N" for a block in an error message (`blocks`: the section's blocks when already read). */
  private ordinalOf(block: Y.Map<unknown>, blocks: Y.Map<unknown>[] | null): string {
    return ordinal((blocks ?? this.blockMaps()).indexOf(block));
  }

  /** The block map a changed type belongs to (itself, or the map holding it), or null. */
  private blockOf(type: unknown): Y.Map<unknown> | null {
    const blocksArray = this.root.get(BLOCKS_KEY);
    for (let at: unknown = type; at instanceof Y.AbstractType; at = at.parent) {
      if (at.parent === blocksArray) return at instanceof Y.Map ? at : null;
    }
    return null;
  }

  /** Whether a type hangs under the section root (false for another root's types). */
  private attachedToRoot(type: unknown): boolean {
    for (let at: unknown = type; at instanceof Y.AbstractType; at = at.parent) {
      if (at === this.root) return true;
    }
    return false;
  }

  private judgeName(): void {
    const name = plainText(this.root.get(NAME_KEY) as Y.Text, () => "the name");
    // Empty while someone retypes it: refused at commit, not keystroke by keystroke.
    if (name === "") return;
    if (isUnstorable(name)) refuse("the name holds a NUL character or an unpaired surrogate");
    const parsed = documentNameSchema.safeParse(name);
    if (!parsed.success && name.trim() !== "") refuse(`the name ${parsed.error.issues[0]!.message}`);
  }

  /** Checks one block whole against the block schema; returns what to remember of it and its new comments. */
  private judgeBlock(map: Y.Map<unknown>, ordinalOf: () => string): { memory: BlockMemory; newComments: NewCommentTag[] } {
    const where = ordinalOf();
    const fields: Record<string, unknown> = {};
    for (const [field, value] of map.entries()) {
      if (value instanceof Y.Text && field === "text") fields[field] = this.typedText(value, () => where);
      else if (value instanceof Y.AbstractType) refuse(`${where}: field "${field}" must be a plain value`);
      else fields[field] = value;
    }
    if (fields.blockType === "text" && !(map.get("text") instanceof Y.Text)) refuse(`${where}: a text block's text must be shared text`);
    const parsed = blockSchema.safeParse(fields);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      refuse(`${where}${issue.path.length > 0 ? `.${issue.path.join(".")}` : ""}: ${issue.message}`.slice(0, 100));
    }
    const block = parsed.data as Block;
    if (firstLocalFileBlock([block]) === 0) refuse(`${where}: local file blocks go through the stdio proxy`);
    if (Object.values(fields).some((value) => storableProblem(value))) refuse(`${where} holds a NUL character or an unpaired surrogate`);
    if (block.blockType !== "text")
      return { memory: { comments: [], newComments: [], keys: storageKeysOf([block]), markupWellFormed: true }, newComments: [] };
    return this.judgeMarkup(map, block.text, () => where);
  }

  /**
   * A text block of which only the text changed (typing): its other fields
   * are as last accepted, so what the block schema would say of it is what
   * it says of the text, read here without the schema.
   */
  private judgeTyping(map: Y.Map<unknown>, ordinalOf: () => string): { memory: BlockMemory; newComments: NewCommentTag[] } {
    const text = this.typedText(map.get("text") as Y.Text, ordinalOf);
    if (isUnstorable(text)) refuse(`${ordinalOf()} holds a NUL character or an unpaired surrogate`);
    return this.judgeMarkup(map, text, ordinalOf);
  }

  /** A text block's shared text, refused past the block limit or holding anything but characters. */
  private typedText(text: Y.Text, where: () => string): string {
    if (text.length > MAX_TEXT_BLOCK_CHARS) refuse(`${where()} is longer than ${MAX_TEXT_BLOCK_CHARS.toLocaleString("en")} characters`);
    return plainText(text, where);
  }

  /** A text block's comment markup: refused when an edit breaks markup that was well formed. */
  private judgeMarkup(map: Y.Map<unknown>, text: string, where: () => string): { memory: BlockMemory; newComments: NewCommentTag[] } {
    const read = readTextBlock(text);
    if (!read.memory.markupWellFormed && this.memory.get(map)?.markupWellFormed !== false)
      refuse(`${where()}: malformed or unbalanced comment markup`);
    return read;
  }

  private remember(map: Y.Map<unknown>): BlockMemory {
    const text = map.get("text");
    const keys = map.get("type") === "storage" && typeof map.get("key") === "string" ? [map.get("key") as string] : [];
    return text instanceof Y.Text ? readTextBlock(text.toString()).memory : { comments: [], newComments: [], keys, markupWellFormed: true };
  }
}

/**
 * A shared text's characters, refusing one that holds anything else (an
 * embed, a nested type): its string would silently leave them out, and
 * peers' editors would meet what no block can hold. (Formatting attributes
 * carry no content and are let through.)
 */
function plainText(text: Y.Text, where: () => string): string {
  const value = text.toString();
  if (value.length !== text.length) refuse(`${where()} may hold only characters`);
  return value;
}

/** Every comment pattern needs this: a keystroke in a block without it costs no scan of the block for markup. */
const mayHoldCommentMarkup = (text: string) => text.includes("svc:comment");

const NO_MARKUP: BlockMemory = Object.freeze({ comments: [], newComments: [], keys: [], markupWellFormed: true });

/**
 * A text block as the rules read it: what to remember of it, and its new
 * comments (read once, and none while its markup is malformed).
 */
function readTextBlock(text: string): { memory: BlockMemory; newComments: NewCommentTag[] } {
  if (!mayHoldCommentMarkup(text)) return { memory: NO_MARKUP, newComments: [] };
  const newComments = newCommentsIfWellFormed(text);
  const memory: BlockMemory = {
    comments: existingCommentTags(text).map((c) => c.raw),
    newComments: commentTagTokens(text)
      .filter((t) => t.raw.startsWith("<svc:comment-new"))
      .map((t) => t.raw),
    keys: [],
    markupWellFormed: newComments !== null,
  };
  return { memory, newComments: newComments ?? [] };
}

/** The new comments of well-formed markup; null when the markup is malformed. */
function newCommentsIfWellFormed(text: string): NewCommentTag[] | null {
  try {
    return newCommentTags(text, "");
  } catch (error) {
    if (isDomainError(error)) return null;
    throw error;
  }
}

/** Whether a block's field (a string, or strings inside a CSV header list) holds what cannot be stored. */
function storableProblem(value: unknown): boolean {
  if (typeof value === "string") return isUnstorable(value);
  return Array.isArray(value) && value.some(storableProblem);
}

/**
 * Why an update writes outside the section, before it is applied: an item
 * placed in another root type. Such an update is refused unapplied: an undo
 * covers only the section, and a root the update created would stay behind.
 */
export function writesOutsideSection(update: Uint8Array): string | null {
  for (const struct of Y.decodeUpdate(update).structs) {
    if (struct instanceof Y.Item && typeof struct.parent === "string" && struct.parent !== SECTION_ROOT) {
      return "an edit may only change the section";
    }
  }
  return null;
}
