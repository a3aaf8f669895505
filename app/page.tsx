import type { Metadata } from "next";
import Link from "next/link";
import { AppShell } from "@/app/_components/app-shell";
import { ErrorPanel } from "@/app/_components/error-panel";
import { TimeAgo } from "@/app/_components/time-ago";
import { splitPath } from "@/app/_lib/format";
import { attempt, listDocuments, type DocumentSummary } from "@/app/_lib/quire";
import { firstParam, withQuery, type SearchParams } from "@/app/_lib/search-params";
import { requireUser } from "@/app/_lib/session";

export const metadata: Metadata = { title: "Documents" };

export default async function HomePage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const params = await searchParams;
  const cursor = firstParam(params.cursor);
  const user = await requireUser(withQuery("/", { cursor }));
  const listed = await attempt(() => listDocuments(user.id, cursor));

  if (!listed.ok) {
    return (
      <AppShell user={user}>
        <ErrorPanel title="Could not list documents" code={listed.code} message={listed.message} />
      </AppShell>
    );
  }

  const { documents, nextCursor } = listed.value;
  const groups = groupByFolder(documents);

  return (
    <AppShell user={user}>
      <div className="page-heading">
        <div>
          <h1>Documents</h1>
          <p className="muted">
            {documents.length === 0 && !cursor
              ? "Your workspace is empty."
              : `${documents.length} document${documents.length === 1 ? "" : "s"}${cursor || nextCursor ? " on this page" : ""}, by path.`}
          </p>
        </div>
      </div>

      {documents.length === 0 ? (
        cursor ? (
          <div className="empty-state">
            <h2>No more documents</h2>
            <p className="muted">You have reached the end of the list.</p>
            <p>
              <Link href="/" className="button">
                Back to the first page
              </Link>
            </p>
          </div>
        ) : (
          <EmptyWorkspace />
        )
      ) : (
        <div className="doc-list" data-testid="document-list">
          {groups.map(({ folder, documents: inFolder }) => (
            <section key={folder || "/"} className="doc-group" aria-label={folder ? `Folder ${folder}` : "Top level"}>
              <h2 className="doc-group-title">
                <FolderIcon />
                {folder ? `${folder}/` : "Top level"}
              </h2>
              <ul>
                {inFolder.map((doc) => (
                  <li key={doc.documentId}>
                    <Link href={`/documents/${doc.documentId}`} className="doc-row">
                      <span className="doc-row-main">
                        <span className="doc-row-name">{doc.name}</span>
                        <span className="doc-row-path">{doc.path}</span>
                        {doc.description ? <span className="doc-row-description">{doc.description}</span> : null}
                      </span>
                      <span className="doc-row-meta">
                        Updated <TimeAgo value={doc.updatedAt} />
                      </span>
                    </Link>
                  </li>
                ))}
              </ul>
            </section>
          ))}
        </div>
      )}

      {cursor || nextCursor ? (
        <nav className="pager" aria-label="Pages">
          {cursor ? <Link href="/">← First page</Link> : <span />}
          {nextCursor ? (
            <Link href={withQuery("/", { cursor: nextCursor })} rel="next">
              Next page →
            </Link>
          ) : null}
        </nav>
      ) : null}
    </AppShell>
  );
}

function groupByFolder(documents: DocumentSummary[]): Array<{ folder: string; documents: DocumentSummary[] }> {
  const groups: Array<{ folder: string; documents: DocumentSummary[] }> = [];
  for (const doc of documents) {
    const { folder } = splitPath(doc.path);
    const last = groups[groups.length - 1];
    if (last && last.folder === folder) last.documents.push(doc);
    else groups.push({ folder, documents: [doc] });
  }
  return groups;
}

function EmptyWorkspace() {
  const example = JSON.stringify(
    {
      action: "create",
      path: "handbook/onboarding",
      name: "Onboarding",
      sections: [{ name: "Welcome", content: [{ blockType: "text", text: "Hello **team**" }] }],
    },
    null,
    2,
  );
  return (
    <div className="empty-state" data-testid="empty-state">
      <div className="empty-state-icon" aria-hidden="true">
        <DocumentIcon />
      </div>
      <h2>No documents yet</h2>
      <p>
        Documents are created through the <code>documents</code> tool: connect an AI agent over MCP, or call the tool from a script with an
        API token, and run its <code>create</code> action with a path, a name and the first sections.
      </p>
      <pre className="code-sample">
        <code>{`documents ${example}`}</code>
      </pre>
      <p className="muted small">New documents appear here, sorted by path. Editing in the browser arrives with live collaboration.</p>
    </div>
  );
}

function FolderIcon() {
  return (
    <svg className="icon" viewBox="0 0 16 16" aria-hidden="true" width="14" height="14">
      <path
        d="M1.5 3.5a1 1 0 0 1 1-1h3.6l1.5 1.5h5.9a1 1 0 0 1 1 1v7.5a1 1 0 0 1-1 1h-11a1 1 0 0 1-1-1z"
        fill="none"
        stroke="currentColor"
        strokeWidth="1.2"
      />
    </svg>
  );
}

function DocumentIcon() {
  return (
    <svg viewBox="0 0 24 24" width="28" height="28" aria-hidden="true">
      <path d="M6 2.75h8.5L19.25 7.5v13.75H6z" fill="none" stroke="currentColor" strokeWidth="1.5" strokeLinejoin="round" />
      <path d="M14.25 2.75V7.75h5M9 12h7M9 15.5h7M9 19h4" fill="none" stroke="currentColor" strokeWidth="1.5" strokeLinecap="round" />
    </svg>
  );
}
