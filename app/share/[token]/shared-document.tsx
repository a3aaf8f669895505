/**
 * A document as a share-link visitor sees it: the document page's reading
 * column (title, meta, tags, properties, sections through SectionBlocks)
 * without anything that needs an account — no branches, history, or links
 * into other documents.
 */
import Link from "next/link";
import type { CSSProperties, ReactNode } from "react";
import { shortId } from "@/app/_lib/format";
import type { DocumentRead, DocumentSection } from "@/app/_lib/quire";
import { SectionBlocks } from "@/app/documents/[documentId]/section-blocks";

export function PublicHeader({ signInHref }: { signInHref: string }) {
  return (
    <header className="app-header public-header">
      <div className="app-header-inner">
        <Link href="/" className="brand">
          <span className="brand-mark" aria-hidden="true">Q</span>
          <span className="brand-name">Quire</span>
        </Link>
        <div className="public-header-actions">
          <Link href={signInHref} className="button button-primary">
            Sign in
          </Link>
        </div>
      </div>
    </header>
  );
}

export function SharedDocument({ doc, banner, aside }: { doc: DocumentRead; banner: ReactNode; aside: ReactNode }) {
  const sections = [...doc.sections].sort((a, b) => a.position - b.position);
  const segments = doc.path.split("/").filter(Boolean);
  return (
    <div className="doc-layout">
      <article className="doc-main" data-testid="shared-document">
        <nav className="breadcrumb" aria-label="Document path">
          <ol>
            {segments.map((segment, index) => (
              <li key={index} aria-current={index === segments.length - 1 ? "page" : undefined}>
                {segment}
              </li>
            ))}
          </ol>
        </nav>
        {banner}
        {doc.deleted ? (
          <div className="banner banner-warning" role="status">
            This document is deleted. Its history is kept.
          </div>
        ) : null}
        <header className="doc-header">
          <h1 className="doc-title">{doc.name}</h1>
          {doc.description ? <p className="doc-description">{doc.description}</p> : null}
          <div className="doc-meta">
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
            <span>
              {sections.length} section{sections.length === 1 ? "" : "s"}
            </span>
          </div>
          {doc.tags.length > 0 ? (
            <ul className="tags" aria-label="Tags">
              {doc.tags.map((tag) => (
                <li key={tag.tagId} className="tag" title={tag.path} style={tagStyle(tag.color)}>
                  {tag.displayName ?? tag.path}
                </li>
              ))}
            </ul>
          ) : null}
          <Properties properties={doc.properties} />
        </header>
        {sections.length === 0 ? (
          <p className="muted empty-section">This document has no sections yet.</p>
        ) : (
          sections.map((section) => <SharedSection key={section.sectionId} section={section} />)
        )}
      </article>
      <aside className="doc-sidebar">
        {aside}
        {sections.length > 1 ? (
          <nav className="panel" aria-label="Sections">
            <h2 className="panel-title">On this page</h2>
            <ol className="toc">
              {sections.map((section) => (
                <li key={section.sectionId}>
                  <a href={`#section-${section.sectionId}`}>{section.name}</a>
                </li>
              ))}
            </ol>
          </nav>
        ) : null}
      </aside>
    </div>
  );
}

function SharedSection({ section }: { section: DocumentSection }) {
  return (
    <section className="doc-section" id={`section-${section.sectionId}`} aria-labelledby={`heading-${section.sectionId}`}>
      <div className="doc-section-heading">
        <h2 id={`heading-${section.sectionId}`}>{section.name}</h2>
      </div>
      <SectionBlocks blocks={section.content} />
      {section.references.length > 0 ? (
        <div className="references">
          <span className="references-label">See also</span>
          {/* Other documents are not part of this link: their titles are shown, not linked. */}
          <ul className="references-plain">
            {section.references.map((ref) => (
              <li key={ref.referenceId}>{ref.displayTitle ?? (ref.targetSectionId ? "Linked section" : "Linked document")}</li>
            ))}
          </ul>
        </div>
      ) : null}
    </section>
  );
}

function Properties({ properties }: { properties: DocumentRead["properties"] }) {
  const entries = Object.entries(properties ?? {});
  if (entries.length === 0) return null;
  return (
    <dl className="properties">
      {entries.map(([key, value]) => (
        <div key={key}>
          <dt>{key}</dt>
          <dd>{typeof value === "boolean" ? (value ? "Yes" : "No") : String(value)}</dd>
        </div>
      ))}
    </dl>
  );
}

function tagStyle(color: string | null): CSSProperties | undefined {
  if (!color || !/^#[0-9a-f]{3}([0-9a-f]{3})?$/i.test(color)) return undefined;
  return { "--tag-color": color } as CSSProperties;
}

export function LockIcon() {
  return (
    <svg viewBox="0 0 16 16" width="11" height="11" aria-hidden="true">
      <rect x="3" y="7" width="10" height="7" rx="1.5" fill="none" stroke="currentColor" strokeWidth="1.4" />
      <path d="M5.25 7V5a2.75 2.75 0 0 1 5.5 0v2" fill="none" stroke="currentColor" strokeWidth="1.4" />
    </svg>
  );
}

export function ShareCard({ children }: { children: ReactNode }) {
  return (
    <main className="auth-page">
      <div className="auth-card">
        <div className="auth-brand">
          <span className="brand-mark" aria-hidden="true">Q</span>
          <span className="brand-name">Quire</span>
        </div>
        {children}
      </div>
    </main>
  );
}

export function LinkOffIcon() {
  return (
    <svg viewBox="0 0 24 24" width="22" height="22" aria-hidden="true">
      <path d="M10 14a4 4 0 0 0 5.66 0l3-3a4 4 0 0 0-5.66-5.66l-1 1" fill="none" stroke="currentColor" strokeWidth="1.8" strokeLinecap="round" />
      <path d="M14 10a4 4 0 0 0-5.66 0l-3 3a4 4 0 0 0 5.66 5.66l1-1" fill="none" stroke="currentColor" strokeWidth="1.8" strokeLinecap="round" />
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
