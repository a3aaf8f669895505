"use client";

/**
 * One section of the live document. Near the screen it joins the section's
 * room; far away it leaves it. Before its room has synced it shows the
 * content the page was rendered with, laid out as the live view will be, so
 * nothing jumps when the room arrives. People who may edit get the name and
 * each text block as editors, every other block in a frame they can move or
 * remove (block-controls.tsx; Mod-Shift-P flips the document-wide switch to
 * the markdown source, preview/mode.tsx), and may paste or drop images onto it; everyone else gets
 * the rendered view, kept live.
 */
import {
  type DragEvent,
  type FocusEvent,
  type KeyboardEvent,
  type MouseEvent,
  memo,
  type PointerEvent,
  type SyntheticEvent,
  type ReactNode,
  useContext,
  useEffect,
  useReducer,
  useRef,
  useState,
} from "react";
import { flushSync } from "react-dom";
import { useToast } from "@/app/_components/toast";
import type { WebsocketProvider } from "y-websocket";
import * as Y from "yjs";
import type { Block } from "@/server/core/blocks";
import { readBlock, readName } from "../readable-content";
import { SectionBlocks } from "../section-blocks";
import { BlockBoundary, UnreadableName } from "../unreadable";
import { BlockFrame, useBlockDrop } from "./block-controls";
import { BlockMenu } from "./block-menu";
import { ResolvedCommentsContext } from "./comment-highlights";
import { blockIndexAt, useImageDrop } from "./image-drop";
import { openRoom, REFUSAL_SHOWN_MS, type RoomAddress, useNearViewport } from "./live-room";
import { SectionControls, startSectionDrag } from "./section-controls";
import type { PresenceHub, PresentUser } from "./presence";
import { useEditorMode } from "./preview/mode";
import { PreviewPlaceholder } from "./preview/placeholder";
import { TextEditor } from "./text-editor";

/** What the page was rendered with, per section; fields at their usual value are left out, as 2,000 sections carry them to the browser. */
export interface InitialSection {
  name: string;
  content: readonly Block[];
  /** Signed download URLs by storage key (absent: none). */
  downloads?: Readonly<Record<string, string>>;
  /** Section permission overrides, shown as badges (absent: none). */
  badges?: string[];
  references?: ReactNode;
  /** Absent: as the page's default (whether this person edits the branch). */
  editable?: boolean;
}

interface Room {
  doc: Y.Doc;
  provider: WebsocketProvider;
}

/** A section's name and content as sent, unchecked: the renderers read them (readable-content.ts). */
interface ShownSection {
  name: unknown;
  content: unknown;
}

/**
 * The section as its room holds it, as plain values (texts as strings). Nothing in the room is trusted to have the shape the
 * codec writes: any editor's socket may put anything there, and the renderers mark what they cannot read.
 */
function roomSection(doc: Y.Doc): ShownSection {
  const { name, blocks } = doc.getMap("section").toJSON();
  return { name, content: blocks };
}

/** A value of the room as a plain value. */
const plain = (value: unknown): unknown => (value instanceof Y.AbstractType ? value.toJSON() : value);

export const LiveSection = memo(function LiveSection({
  address,
  sectionId,
  initial,
  editableByDefault,
  me,
  presence,
  index,
  count,
  adoptsServerHtml,
}: {
  address: RoomAddress;
  sectionId: string;
  /** What the page was rendered with; absent for a section added since. */
  initial: InitialSection | undefined;
  /** Whether a section the page was not rendered with is editable. */
  editableByDefault: boolean;
  /** Who this page publishes as (null: a share-link visitor, who is not named). */
  me: PresentUser | null;
  presence: PresenceHub;
  /** Where the section is among those shown, for the move buttons (numbers, so the memo holds while nothing moves). */
  index: number;
  count: number;
  /** Asked once, when the section mounts: whether it is being hydrated over the server's HTML (see ServerHtmlUntilNear). */
  adoptsServerHtml: () => boolean;
}) {
  const frame = useRef<HTMLElement>(null);
  const near = useNearViewport(frame);
  const [keepsServerHtml, setKeepsServerHtml] = useState(adoptsServerHtml);
  // A press on the server's drag handle holds the server's HTML until it ends: replacing the handle would cancel its drag.
  const [handleHeld, setHandleHeld] = useState(false);
  // Once near, the section renders itself for good (its room, editors, tools); the server's copy is not needed again.
  if (near && keepsServerHtml && !handleHeld) setKeepsServerHtml(false);
  const [room, setRoom] = useState<Room | null>(null);
  const [synced, setSynced] = useState(false);
  const [lastSeen, setLastSeen] = useState<ShownSection | null>(null);
  const [, rerender] = useReducer((n: number) => n + 1, 0);
  const editable = initial?.editable ?? editableByDefault;
  const images = useImageDrop(address, sectionId);
  /** The block the writer was last in: new blocks from the menu go after it. */
  const lastBlock = useRef<number | undefined>(undefined);
  const toast = useToast();

  useEffect(() => {
    if (!near) return;
    const doc = new Y.Doc();
    const provider = openRoom(address, doc, sectionId, (message) => toast({ message, durationMs: REFUSAL_SHOWN_MS }));
    if (me) provider.awareness.setLocalStateField("user", me);
    const untrack = presence.track(sectionId, provider.awareness);
    let everSynced = false;
    const onSync = (isSynced: boolean) => {
      if (isSynced) {
        everSynced = true;
        setSynced(true);
      }
    };
    provider.on("sync", onSync);
    setRoom({ doc, provider });
    return () => {
      // Far off screen the section shows what its room last held, not what the page was first rendered with.
      if (everSynced) setLastSeen(roomSection(doc));
      untrack();
      provider.off("sync", onSync);
      provider.destroy();
      doc.destroy();
      setRoom(null);
      setSynced(false);
    };
  }, [near, address, sectionId, me, presence, toast]);

  const editorMode = useEditorMode();
  const resolvedComments = useContext(ResolvedCommentsContext);
  useEffect(() => {
    if (!room) return;
    const root = room.doc.getMap("section");
    // Editors re-render on structure only (typed text flows through CodeMirror, not React); the rendered view on every change.
    const changed = (events: Array<Y.YEvent<Y.AbstractType<unknown>>>) => {
      if (!editable || events.some((event) => !(event.target instanceof Y.Text))) rerender();
    };
    root.observeDeep(changed);
    return () => root.unobserveDeep(changed);
  }, [room, editable]);

  const live = room && synced ? room : null;
  const section: ShownSection | null = live ? roomSection(live.doc) : (lastSeen ?? initial ?? null);
  const downloads = initial?.downloads ?? {};
  const headingId = `heading-${sectionId}`;

  /**
   * A press, click or focus that reaches the server's HTML before the section
   * came near (a jump to it, Tab, a quick click) wakes it: the section
   * renders itself at once, the same markup, and the focus or click is handed
   * to the same control in it, found by its place among the section's
   * controls. A press replaces the control under the pointer, and the
   * browser then sends no click (or one beside the control): the click is
   * handed on when the press ends, unless one arrives.
   */
  const pressedControl = useRef<number | null>(null);
  const controlAt = (at: number) => (at >= 0 ? frame.current?.querySelectorAll<HTMLElement>(CONTROLS)[at] : undefined);
  const wake = (event: SyntheticEvent): number => {
    const at = [...(frame.current?.querySelectorAll(CONTROLS) ?? [])].findIndex((control) => control.contains(event.target as Node));
    flushSync(() => setKeepsServerHtml(false));
    return at;
  };
  const serverHtmlEvents = {
    onPointerDownCapture: (event: PointerEvent) => {
      if (!(event.target as Element).closest('[draggable="true"]')) {
        pressedControl.current = wake(event);
        return;
      }
      // The drag it starts is the section's to carry (below); the section wakes when the press or the drag ends.
      setHandleHeld(true);
      const release = () => {
        window.removeEventListener("pointerup", release, true);
        window.removeEventListener("dragend", release, true);
        setHandleHeld(false);
      };
      window.addEventListener("pointerup", release, true);
      window.addEventListener("dragend", release, true);
    },
    onDragStart: (event: DragEvent<HTMLElement>) => {
      if ((event.target as Element).closest('[data-testid="drag-handle"]')) startSectionDrag(event, sectionId);
    },
    onFocusCapture: (event: FocusEvent) => controlAt(wake(event))?.focus(),
  };
  const onPointerUpCapture = () => {
    const pressed = pressedControl.current;
    if (pressed === null) return;
    setTimeout(() => {
      if (pressedControl.current !== pressed) return;
      pressedControl.current = null;
      controlAt(pressed)?.click();
    });
  };
  const onClickCapture = (event: MouseEvent) => {
    const pressed = pressedControl.current;
    pressedControl.current = null;
    const at = keepsServerHtml ? wake(event) : pressed;
    if (at === null) return;
    const control = controlAt(at);
    if (!control || control.contains(event.target as Node)) return;
    event.preventDefault();
    event.stopPropagation();
    control.click();
  };

  // The one source switch (the document's "Markdown source"), from the keyboard in any section one edits.
  const toggleSource = (event: KeyboardEvent) => {
    if ((event.metaKey || event.ctrlKey) && event.shiftKey && event.key.toLowerCase() === "p") {
      event.preventDefault();
      editorMode.setMode(editorMode.mode === "source" ? "preview" : "source");
    }
  };

  const root = live?.doc.getMap("section");
  const nameText = root?.get("name");
  const blocks = root?.get("blocks");
  const blockDrop = useBlockDrop(sectionId, blocks instanceof Y.Array ? blocks : null);

  return (
    <section
      ref={frame}
      className={`doc-section live-section${section ? "" : " live-section-loading"}`}
      id={`section-${sectionId}`}
      aria-labelledby={headingId}
      data-testid="live-section"
      data-section-id={sectionId}
      data-synced={live ? "true" : "false"}
      onKeyDown={editable ? toggleSource : undefined}
      onFocus={(event) => {
        lastBlock.current = blockIndexAt(event.target) ?? lastBlock.current;
      }}
      onClickCapture={onClickCapture}
      onPointerUpCapture={onPointerUpCapture}
      {...(keepsServerHtml ? serverHtmlEvents : {})}
      {...(editable ? images.handlers : {})}
    >
      <ServerHtmlUntilNear keep={keepsServerHtml}>
        <div className="doc-section-heading">
          <h2 id={headingId}>
            {editable && live && nameText instanceof Y.Text ? (
              <TextEditor text={nameText} awareness={live.provider.awareness} label="Section name" kind="name" placeholder="Section name" />
            ) : (
              <span className={editable ? "live-name-editor" : undefined}>
                {section ? (readName(section.name) ?? <UnreadableName />) : "Loading section…"}
              </span>
            )}
          </h2>
          {initial?.badges?.map((badge) => (
            <span key={badge} className="badge" title="Section permission override">
              {badge}
            </span>
          ))}
          {editable ? <SectionControls address={address} sectionId={sectionId} index={index} count={count} /> : null}
        </div>
        {!section ? (
          <p className="muted empty-section">Loading section…</p>
        ) : editable ? (
          <div className="blocks live-blocks" {...blockDrop}>
            {live && blocks instanceof Y.Array ? (
              blocks.toArray().map((block: unknown, index) => {
                const text = textOf(block);
                return text ? (
                  <BlockBoundary key={blockKey(block, index)} blockType="text">
                    <TextEditor
                      text={text}
                      awareness={live.provider.awareness}
                      label="Section text"
                      kind="prose"
                      placeholder={TEXT_PLACEHOLDER}
                      blockIndex={index}
                      {...(me ? { commentOn: { documentId: address.documentId, branchName: address.branchName, sectionId } } : {})}
                    />
                  </BlockBoundary>
                ) : block instanceof Y.Map ? (
                  <BlockFrame key={blockKey(block, index)} sectionId={sectionId} blocks={blocks} block={block} index={index}>
                    <SectionBlocks content={[plain(block)]} downloads={downloads} />
                  </BlockFrame>
                ) : (
                  <div key={blockKey(block, index)} data-block-index={index}>
                    <SectionBlocks content={[plain(block)]} downloads={downloads} />
                  </div>
                );
              })
            ) : Array.isArray(section.content) ? (
              section.content.map((value: unknown, index) => {
                const read = readBlock(value);
                return read.readable && read.block.blockType === "text" ? (
                  <PreviewPlaceholder
                    // biome-ignore lint/suspicious/noArrayIndexKey: the pre-sync view is replaced whole once the room syncs
                    key={index}
                    text={read.block.text}
                    mode={editorMode.mode}
                    resolved={resolvedComments?.ids ?? NO_COMMENTS}
                    placeholder={TEXT_PLACEHOLDER}
                  />
                ) : (
                  // biome-ignore lint/suspicious/noArrayIndexKey: as above
                  <SectionBlocks key={index} content={[value]} downloads={downloads} />
                );
              })
            ) : (
              <SectionBlocks content={section.content} downloads={downloads} />
            )}
          </div>
        ) : (
          <SectionBlocks content={section.content} downloads={downloads} />
        )}
        {editable ? <BlockMenu address={address} sectionId={sectionId} afterIndex={() => lastBlock.current} /> : null}
        {images.state.kind === "uploading" ? (
          <p className="muted small" role="status">
            Adding {images.state.count === 1 ? "the image" : `${images.state.count} images`}…
          </p>
        ) : images.state.kind === "error" ? (
          <p className="inline-error" role="alert">
            The image was not added: {images.state.message}
          </p>
        ) : null}
        {initial?.references ? (
          <div className="references">
            <span className="references-label">See also</span>
            {initial.references}
          </div>
        ) : null}
      </ServerHtmlUntilNear>
    </section>
  );
});

/** What a person can click or focus in a section, in document order: the same list in the server's HTML and in the section's own render. */
const CONTROLS = "a[href], button, input, select, textarea, summary, [tabindex], [contenteditable]";

const NO_HTML = { __html: "" };

/** What an empty text block shows, in its editor and in the placeholder before it. */
const TEXT_PLACEHOLDER = "Write here…";
const NO_COMMENTS: ReadonlySet<string> = new Set();

/**
 * The inside of a section, or, while `keep` holds, the HTML the server
 * rendered for it, left as it is: an element with `dangerouslySetInnerHTML`
 * is a leaf to React, so hydration neither builds nor checks what it holds.
 * A 2,000-section page thus hydrates 2,000 section frames rather than every
 * heading, block and tool in them (bench/README, "The editor in the
 * browser"); a section renders its inside on the client once it comes near
 * the screen, the same markup, so nothing moves. On the server, and for a
 * section mounted after hydration, `keep` is false or moot: the children are
 * rendered. The keys make the switch a replacement, not an update that
 * would leave the server's nodes beside the new ones.
 */
function ServerHtmlUntilNear({ keep, children }: { keep: boolean; children: ReactNode }) {
  if (keep && typeof window !== "undefined") {
    // biome-ignore lint/security/noDangerouslySetInnerHtml: always the empty string; the point is that React leaves the server's nodes alone
    return <div key="server" className="live-section-body" dangerouslySetInnerHTML={NO_HTML} suppressHydrationWarning />;
  }
  return (
    <div key="client" className="live-section-body">
      {children}
    </div>
  );
}

/** The shared text of a text block, to edit; null for any other block, or for something in the list that is no block at all. */
function textOf(block: unknown): Y.Text | null {
  if (!(block instanceof Y.Map) || block.get("blockType") !== "text") return null;
  const text = block.get("text");
  return text instanceof Y.Text ? text : null;
}

/**
 * A stable React key per Y.Map block: its Yjs item id, the same for everyone and for the block's whole life. A value that is
 * not a shared type has no id and is keyed by its place.
 */
function blockKey(block: unknown, index: number): string {
  const id = block instanceof Y.AbstractType ? block._item?.id : undefined;
  return id ? `${id.client}:${id.clock}` : `at-${index}`;
}
