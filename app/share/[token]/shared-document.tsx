/**
 * A document as a share-link visitor sees it: the document page's reading
 * column (title, meta, tags, properties, sections through SectionBlocks)
 * without anything that needs an account — no branches, history, or links
 * into other documents.
 */
import type { ReactNode } from "react";
import { shortId } from "@/app/_lib/format";
import type { DocumentRead, DocumentSection } from "@/app/_lib/quire";
import { DocumentBody, PathBreadcrumb, referenceTitle, SectionFrame, sortedSections } from "@/app/documents/[documentId]/document-body";
import { initialSections } from "@/app/documents/[documentId]/live/initial-sections";
import { ToastProvider } from "@/app/_components/toast";
import { LiveDocument } from "@/app/documents/[documentId]/live/live-document";

export function SharedDocument({
  doc,
  banner,
  aside,
  shareToken,
}: {
  doc: DocumentRead;
  banner: ReactNode;
  aside: ReactNode;
  /** The link's token: the sections are then followed live through the branch's rooms, read only. */
  shareToken: string;
}) {
  const sections = sortedSections(doc);
  return (
    <DocumentBody
      doc={doc}
      sections={sections}
      testId="shared-document"
      breadcrumb={<PathBreadcrumb path={doc.path} label="Document path" />}
      banners={
        <>
          {banner}
          {doc.deleted ? (
            <div className="banner banner-warning" role="status">
              This document is deleted. Its history is kept.
            </div>
          ) : null}
        </>
      }
      meta={{
        before: (
          <>
            <span className="access-pill" title="This link lets you read the document, not change it.">
              <LockIcon /> Read only
            </span>
            {doc.branchName ? (
              <span className="branch-pill" title="Branch">
                {doc.branchName}
              </span>
            ) : null}
            <span>
              version <code>{shortId(doc.headCommitId)}</code>
            </span>
          </>
        ),
      }}
      renderSection={(section) => <SharedSection key={section.sectionId} section={section} />}
      liveSections={
        doc.branchName && !doc.deleted ? (
          // The live page's notices (a room's refusal, Undo after removing a block) show in this toast.
          <ToastProvider>
            <LiveDocument
              documentId={doc.documentId}
              branchName={doc.branchName}
              me={null}
              shareToken={shareToken}
              canEdit={false}
              order={sections.map((s) => s.sectionId)}
              sections={initialSections(sections, {
                editsByDefault: false,
                editable: (section) => section.yourPermission === "edit",
                references: (section) => <PlainReferences section={section} />,
              })}
            />
          </ToastProvider>
        ) : undefined
      }
      asideTop={aside}
    />
  );
}

function SharedSection({ section }: { section: DocumentSection }) {
  return <SectionFrame section={section} references={<PlainReferences section={section} />} />;
}

/** Other documents are not part of this link: their titles are shown, not linked. */
function PlainReferences({ section }: { section: DocumentSection }) {
  return (
    <ul className="references-plain">
      {section.references.map((ref) => (
        <li key={ref.referenceId}>{referenceTitle(ref)}</li>
      ))}
    </ul>
  );
}

export function LockIcon() {
  return (
    <svg viewBox="0 0 16 16" width="11" height="11" aria-hidden="true">
      <rect x="3" y="7" width="10" height="7" rx="1.5" fill="none" stroke="currentColor" strokeWidth="1.4" />
      <path d="M5.25 7V5a2.75 2.75 0 0 1 5.5 0v2" fill="none" stroke="currentColor" strokeWidth="1.4" />
    </svg>
  );
}

export function LinkOffIcon() {
  return (
    <svg viewBox="0 0 24 24" width="22" height="22" aria-hidden="true">
      <path
        d="M10 14a4 4 0 0 0 5.66 0l3-3a4 4 0 0 0-5.66-5.66l-1 1"
        fill="none"
        stroke="currentColor"
        strokeWidth="1.8"
        strokeLinecap="round"
      />
      <path
        d="M14 10a4 4 0 0 0-5.66 0l-3 3a4 4 0 0 0 5.66 5.66l1-1"
        fill="none"
        stroke="currentColor"
        strokeWidth="1.8"
        strokeLinecap="round"
      />
      <path d="M4 4l16 16" fill="none" stroke="currentColor" strokeWidth="1.8" strokeLinecap="round" />
    </svg>
  );
}

export function KeyIcon() {
  return (
    <svg viewBox="0 0 24 24" width="22" height="22" aria-hidden="true">
      <circle cx="8" cy="15" r="4" fill="none" stroke="currentColor" strokeWidth="1.8" />
      <path d="M11 12l8-8M16 7l3 3M14 9l2 2" fill="none" stroke="currentColor" strokeWidth="1.8" strokeLinecap="round" />
    </svg>
  );
}
