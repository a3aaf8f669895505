"use client";

/**
 * The sections of a branch, live. The outline room gives their order (the
 * server writes it: sections added, moved, deleted or hidden by anyone show
 * up here); each section joins its own room when it nears the screen. Editors
 * get the structure buttons (move, delete, add) beside each section; the
 * structure itself changes through the `sections` tool, and the outline
 * follows the branch head.
 */
import "./live.css";
import { memo, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState, useSyncExternalStore } from "react";
import type { WebsocketProvider } from "y-websocket";
import * as Y from "yjs";
import { forgetOutline, outlineFromYDoc } from "@/server/collab/codec";
import { holdInView, sectionAnchorOf } from "@/app/_components/hold-in-view";
import type { WorkspacePerson as Person } from "@/app/_lib/quire";
import { ResolvedComments, ResolvedCommentsContext } from "./comment-highlights";
import { CommentsPanel } from "./comments-panel";
import { CommitBar, useDraftStatus } from "./commit-bar";
import { type InitialSection, LiveSection } from "./live-section";
import { AddSection, SectionArrangement } from "./section-controls";
import { sectionChunks } from "./section-chunks";
import { afterSectionRooms, openRoom, type RoomAddress } from "./live-room";
import { PresenceHub, type PresentUser, presentUser } from "./presence";
import { EditorModeProvider, EditorModeToggle } from "./preview/mode";

export interface LiveDocumentProps {
  documentId: string;
  branchName: string;
  /** The signed-in person (null on a share link). */
  me: { userId: string; name: string } | null;
  shareToken?: string;
  /** Whether this person may edit the branch (sections may still be read-only by their overrides). */
  canEdit: boolean;
  /** Section ids in the order the page was rendered with. */
  order: string[];
  sections: Record<string, InitialSection>;
  /** The comments resolved when the page was rendered (their highlights are muted). */
  resolvedCommentIds?: readonly string[];
}

export function LiveDocument({
  documentId,
  branchName,
  me,
  shareToken,
  canEdit,
  order: initialOrder,
  sections,
  resolvedCommentIds,
}: LiveDocumentProps) {
  const address = useMemo<RoomAddress>(
    () => ({ documentId, branchName, ...(shareToken ? { shareToken } : {}) }),
    [documentId, branchName, shareToken],
  );
  // Keyed on the values: a refresh of the page hands a new `me` object, which must not reopen every room.
  const userId = me?.userId;
  const userName = me?.name;
  const self = useMemo<PresentUser | null>(
    () => (userId !== undefined && userName !== undefined ? presentUser(userId, userName) : null),
    [userId, userName],
  );
  const presence = useMemo(() => new PresenceHub(), []);
  // Made once per page: the panel keeps it current, editors restyle from it.
  const [resolvedComments] = useState(() => new ResolvedComments(resolvedCommentIds ?? []));
  const order = useOutline(address, initialOrder);
  const adoptsServerHtml = useServerHtmlAdoption();
  useSectionAnchor();
  // Share-link visitors have no session for the typed API: they see who is in the rooms they opened.
  const status = useDraftStatus(documentId, branchName, me !== null);

  return (
    <ResolvedCommentsContext.Provider value={resolvedComments}>
      <EditorModeProvider documentId={documentId}>
        <div className="live-document" data-testid="live-document">
          <div className="live-document-tools">
            <PresenceBar presence={presence} connected={status?.connected ?? []} />
            {canEdit ? <EditorModeToggle /> : null}
          </div>
          {/* Share-link visitors have no session for the typed API, so no comment list. */}
          {me ? <CommentsPanel documentId={documentId} branchName={branchName} resolvedComments={resolvedComments} /> : null}
          <SectionArrangement address={address}>
            <SectionList
              address={address}
              order={order}
              sections={sections}
              canEdit={canEdit}
              self={self}
              presence={presence}
              adoptsServerHtml={adoptsServerHtml}
            />
          </SectionArrangement>
          {/* Last in the column and stuck to the bottom of the screen: when it appears nothing above it moves. */}
          {canEdit ? <CommitBar documentId={documentId} branchName={branchName} status={status} /> : null}
        </div>
      </EditorModeProvider>
    </ResolvedCommentsContext.Provider>
  );
}

/**
 * The sections in outline order. Memoized, and each section too: the draft
 * status the server sends as the draft changes re-renders the bars above and
 * below, never two thousand sections.
 */
const SectionList = memo(function SectionList({
  address,
  order,
  sections,
  canEdit,
  self,
  presence,
  adoptsServerHtml,
}: {
  address: RoomAddress;
  order: string[];
  sections: Record<string, InitialSection>;
  canEdit: boolean;
  self: PresentUser | null;
  presence: PresenceHub;
  adoptsServerHtml: () => boolean;
}) {
  const chunks = useMemo(() => sectionChunks(order), [order]);
  return (
    <>
      {order.length === 0 ? <p className="muted empty-section">This document has no sections yet.</p> : null}
      {canEdit ? <AddSection address={address} position={0} label="Add a section at the top" /> : null}
      {chunks.map((chunk) => (
        <div
          key={chunk.key}
          className="section-chunk"
          // Until the browser has rendered a chunk once it takes this height, a guess from its sections; then the height it had.
          style={{ containIntrinsicSize: `auto ${chunk.sections.length * GUESSED_SECTION_HEIGHT}px` }}
        >
          {chunk.sections.map(({ sectionId, index }) => (
            <LiveSection
              key={sectionId}
              address={address}
              sectionId={sectionId}
              initial={sections[sectionId]}
              editableByDefault={canEdit}
              me={self}
              presence={presence}
              index={index}
              count={order.length}
              adoptsServerHtml={adoptsServerHtml}
            />
          ))}
        </div>
      ))}
      {canEdit && order.length > 0 ? <AddSection address={address} position={order.length} label="Add a section at the end" /> : null}
    </>
  );
});

/** Height of a section the browser has not laid out yet, for the chunk's placeholder size. */
const GUESSED_SECTION_HEIGHT = 120;

const subscribeToNothing = () => () => {};

/**
 * Whether a section mounting now is being hydrated over the server's HTML:
 * true for the sections of the page's first render in the browser when that
 * render hydrates (React reads the server snapshot only while hydrating),
 * false for a page rendered in the browser (a client navigation) and for
 * every section mounted after the first commit. Sections ask once, at mount.
 */
function useServerHtmlAdoption(): () => boolean {
  const hydrating = useSyncExternalStore(
    subscribeToNothing,
    () => false,
    () => true,
  );
  const firstRenderHydrates = useRef(hydrating);
  useLayoutEffect(() => {
    firstRenderHydrates.current = false;
  }, []);
  return useCallback(() => firstRenderHydrates.current, []);
}

/**
 * A link to a section (a notification, a backlink, the outline, the commit
 * bar) lands on it and keeps it in view while the sections lay out
 * (hold-in-view.ts): on the page's first render and on every change of the
 * address's fragment.
 */
function useSectionAnchor(): void {
  useEffect(() => {
    let release: (() => void) | null = null;
    const land = () => {
      const id = sectionAnchorOf(window.location.hash);
      if (id) release = holdInView(id);
    };
    land();
    window.addEventListener("hashchange", land);
    return () => {
      window.removeEventListener("hashchange", land);
      release?.();
    };
  }, []);
}

/** The branch outline: the section ids this person may see, in order, kept by the server. */
function useOutline(address: RoomAddress, initial: string[]): string[] {
  const [order, setOrder] = useState(initial);
  useEffect(() => {
    const doc = new Y.Doc();
    let provider: WebsocketProvider | null = null;
    // The same ids in the same order keep the same array, so the section list does not re-render for nothing.
    const update = () => {
      if (!provider?.synced) return;
      const next = outlineFromYDoc(doc);
      setOrder((shown) => (shown.length === next.length && shown.every((id, i) => id === next[i]) ? shown : next));
    };
    // After the rooms of the sections on screen (afterSectionRooms says why).
    const cancel = afterSectionRooms(address.documentId, () => {
      const opened = openRoom(address, doc);
      provider = opened;
      opened.on("sync", update);
      // The list shown stays as it is until the next connection's outline is synced (`update` waits for it).
      opened.on("status", ({ status }) => status === "disconnected" && forgetOutline(doc, opened));
    });
    doc.on("update", update);
    return () => {
      cancel();
      provider?.destroy();
      doc.destroy();
    };
  }, [address]);
  return order;
}

/** Everyone on the branch as coloured initials: the people in the rooms this page has open, and the server's list of everyone connected. */
function PresenceBar({ presence, connected }: { presence: PresenceHub; connected: Person[] }) {
  const inRooms = useSyncExternalStore(presence.subscribe, presence.getSnapshot, () => []);
  const people = useMemo(() => {
    const seen = new Set(inRooms.map((p) => p.userId));
    return [...inRooms, ...connected.filter((p) => !seen.has(p.userId)).map((p) => presentUser(p.userId, p.name))];
  }, [inRooms, connected]);
  return (
    <div className="presence" data-testid="presence">
      <ul className="avatars" aria-label="People on this branch">
        {people.map((person) => (
          <li key={person.userId} className="avatar" style={{ backgroundColor: person.color }} title={person.name}>
            <span aria-hidden="true">{initials(person.name)}</span>
            <span className="visually-hidden">{person.name}</span>
          </li>
        ))}
      </ul>
    </div>
  );
}

export function initials(name: string): string {
  const words = name.trim().split(/\s+/).filter(Boolean);
  return (
    words
      .slice(0, 2)
      .map((w) => w[0]!.toUpperCase())
      .join("") || "?"
  );
}
