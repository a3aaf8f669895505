/**
 * The reading column of a document — breadcrumb, header (title, description,
 * meta line, tags, properties), sections and the "On this page" sidebar —
 * shared by the document page and the share-link page. Each page fills the
 * slots with what its readers may see and do.
 */
import type { CSSProperties, ReactNode } from "react";
import type { DocumentRead, DocumentSection } from "@/app/_lib/quire";
import { readName, UNREADABLE_NAME } from "./readable-content";
import { SectionBlocks } from "./section-blocks";
import { SectionOutline } from "./section-outline";
import { UnreadableName } from "./unreadable";

/** The sections in reading order. */
export function sortedSections(doc: DocumentRead): DocumentSection[] {
  return [...doc.sections].sort((a, b) => a.position - b.position);
}

export function DocumentBody({
  doc,
  sections,
  testId,
  breadcrumb,
  banners,
  titleAction,
  meta,
  renderSection,
  liveSections,
  asideTop,
  asideBottom,
}: {
  doc: DocumentRead;
  sections: DocumentSection[];
  testId?: string;
  breadcrumb: ReactNode;
  banners: ReactNode;
  /** Shown beside the title (the title then sits in a `doc-header-top` row). */
  titleAction?: ReactNode;
  /** The items of the meta line before the section count, and after it. */
  meta: { before: ReactNode; after?: ReactNode };
  renderSection: (section: DocumentSection) => ReactNode;
  /** The sections as a live view (its own order and empty state) instead of `renderSection` per section. */
  liveSections?: ReactNode;
  asideTop: ReactNode;
  asideBottom?: ReactNode;
}) {
  const title = <h1 className="doc-title">{doc.name}</h1>;
  return (
    <div className="doc-layout">
      <article className="doc-main" data-testid={testId}>
        {breadcrumb}
        {banners}
        <header className="doc-header">
          {titleAction !== undefined ? (
            <div className="doc-header-top">
              {title}
              {titleAction}
            </div>
          ) : (
            title
          )}
          {doc.description ? <p className="doc-description">{doc.description}</p> : null}
          <div className="doc-meta">
            {meta.before}
            <span>
              {sections.length} section{sections.length === 1 ? "" : "s"}
            </span>
            {meta.after}
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
        {liveSections ??
          (sections.length === 0 ? <p className="muted empty-section">This document has no sections yet.</p> : sections.map(renderSection))}
      </article>
      <aside className="doc-sidebar">
        {asideTop}
        {sections.length > 1 ? (
          <SectionOutline
            ids={sections.map((section) => section.sectionId)}
            names={sections.map((section) => readName(section.name) ?? UNREADABLE_NAME)}
          />
        ) : null}
        {asideBottom}
      </aside>
    </div>
  );
}

/** The document's path as a breadcrumb, after any `leading` items; the last segment is the current page. */
export function PathBreadcrumb({ path, label, leading }: { path: string; label: string; leading?: ReactNode }) {
  const segments = path.split("/").filter(Boolean);
  return (
    <nav className="breadcrumb" aria-label={label}>
      <ol>
        {leading}
        {segments.map((segment, index) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: path segments repeat ("a/a"); their place is their identity
          <li key={index} aria-current={index === segments.length - 1 ? "page" : undefined}>
            {segment}
          </li>
        ))}
      </ol>
    </nav>
  );
}

/** One section: its heading (with any `badges`), its content, and its "See also" list when it has references. */
export function SectionFrame({ section, badges, references }: { section: DocumentSection; badges?: ReactNode; references: ReactNode }) {
  return (
    <section className="doc-section" id={`section-${section.sectionId}`} aria-labelledby={`heading-${section.sectionId}`}>
      <div className="doc-section-heading">
        <h2 id={`heading-${section.sectionId}`}>{readName(section.name) ?? <UnreadableName />}</h2>
        {badges}
      </div>
      <SectionBlocks content={section.content} downloads={section.downloads} />
      {section.references.length > 0 ? (
        <div className="references">
          <span className="references-label">See also</span>
          {references}
        </div>
      ) : null}
    </section>
  );
}

/** How a reference reads when its target has no title. */
export function referenceTitle(ref: DocumentSection["references"][number]): string {
  return ref.displayTitle ?? (ref.targetSectionId ? "Linked section" : "Linked document");
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
