import type { Metadata } from "next";
import Link from "next/link";
import { AppShell } from "@/app/_components/app-shell";
import { DeletedDocumentsView } from "@/app/_components/deleted-documents";
import { ErrorPanel } from "@/app/_components/error-panel";
import { TimeAgo } from "@/app/_components/time-ago";
import { splitPath } from "@/app/_lib/format";
import { NewDocumentForm } from "@/app/_components/new-document-form";
import { attempt, listDocuments, type DocumentSummary } from "@/app/_lib/quire";
import { loadWorkspace } from "@/app/_lib/workspace";
import { firstParam, withQuery, type SearchParams } from "@/app/_lib/search-params";
import { requireUser } from "@/app/_lib/session";

export const metadata: Metadata = { title: "Documents" };

type Order = "path" | "updated";

export default async function HomePage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const params = await searchParams;
  const cursor = firstParam(params.cursor);
  const search = firstParam(params.q)?.trim() || undefined;
  const order: Order = firstParam(params.order) === "updated" ? "updated" : "path";
  const here = (extra: Record<string, string | undefined>) =>
    withQuery("/", { q: search, order: order === "updated" ? "updated" : undefined, ...extra });
  const user = await requireUser(here({ cursor }));
  if (firstParam(params.view) === "deleted") return <DeletedDocumentsView user={user} cursor={cursor} />;
  const [listed, workspace] = await Promise.all([
    attempt(() => listDocuments(user.id, { cursor, search, orderBy: order })),
    loadWorkspace(user.id),
  ]);
  // Guests read what they are given; creating documents is for members (the tool refuses guests either way).
  const canCreate = workspace.ok && workspace.value.viewer.role !== "guest";

  if (!listed.ok) {
    return (
      <AppShell user={user}>
        <ErrorPanel title="Could not list documents" code={listed.code} message={listed.message} />
      </AppShell>
    );
  }

  const { documents, nextCursor } = listed.value;
  const paged = Boolean(cursor || nextCursor);
  const summary = search
    ? `${documents.length}${nextCursor ? "+" : ""} matching “${search}”`
    : `${documents.length} document${documents.length === 1 ? "" : "s"}${paged ? " on this page" : ""}`;

  return (
    <AppShell user={user}>
      <div className="page-heading">
        <div>
          <h1>Documents</h1>
          <p className="muted">
            {documents.length === 0 && !cursor && !search
              ? canCreate
                ? "Your workspace is empty."
                : "Nothing is shared with you yet."
              : `${summary}, ${order === "updated" ? "most recently edited first" : "by path"}.`}
          </p>
        </div>
        {canCreate ? <NewDocumentForm /> : null}
      </div>

      <div className="doc-toolbar">
        <search className="doc-search">
          <form action="/" className="doc-search-form">
            <label className="visually-hidden" htmlFor="document-search">
              Search documents by name or path
            </label>
            <input
              id="document-search"
              name="q"
              type="search"
              defaultValue={search ?? ""}
              placeholder="Search by name or path"
              maxLength={200}
            />
            {order === "updated" ? <input type="hidden" name="order" value="updated" /> : null}
            <button type="submit" className="button">
              Search
            </button>
          </form>
        </search>
        <nav className="doc-order" aria-label="Order">
          <Link href={withQuery("/", { q: search })} aria-current={order === "path" ? "page" : undefined}>
            By path
          </Link>
          <Link href={withQuery("/", { q: search, order: "updated" })} aria-current={order === "updated" ? "page" : undefined}>
            Recently edited
          </Link>
          <Link href={withQuery("/", { view: "deleted" })}>Deleted</Link>
        </nav>
      </div>

      {documents.length === 0 ? (
        search ? (
          <div className="empty-state">
            <h2>No document matches “{search}”</h2>
            <p className="muted">Search looks at names and paths, ignoring case.</p>
            <p>
              <Link href={withQuery("/", { order: order === "updated" ? "updated" : undefined })} className="button">
                Show all documents
              </Link>
            </p>
          </div>
        ) : cursor ? (
          <div className="empty-state">
            <h2>No more documents</h2>
            <p className="muted">You have reached the end of the list.</p>
            <p>
              <Link href={here({})} className="button">
                Back to the first page
              </Link>
            </p>
          </div>
        ) : (
          <EmptyWorkspace canCreate={canCreate} />
        )
      ) : order === "path" && !search ? (
        <div className="doc-list" data-testid="document-list">
          <FolderContents folder={folderTree(documents)} />
        </div>
      ) : (
        <div className="doc-list doc-group" data-testid="document-list">
          <DocumentRows documents={documents} />
        </div>
      )}

      {paged ? (
        <nav className="pager" aria-label="Pages">
          {cursor ? <Link href={here({})}>← First page</Link> : <span />}
          {nextCursor ? (
            <Link href={here({ cursor: nextCursor })} rel="next">
              Next page →
            </Link>
          ) : null}
        </nav>
      ) : null}
    </AppShell>
  );
}

function DocumentRows({ documents }: { documents: DocumentSummary[] }) {
  return (
    <ul>
      {documents.map((doc) => (
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
  );
}

interface Folder {
  /** The folder's own name (one path segment); empty for the top level. */
  name: string;
  path: string;
  folders: Folder[];
  documents: DocumentSummary[];
}

/** The documents of a page (sorted by path) as nested folders, each listing its documents before its subfolders. */
function folderTree(documents: DocumentSummary[]): Folder {
  const root: Folder = { name: "", path: "", folders: [], documents: [] };
  for (const doc of documents) {
    const { folder } = splitPath(doc.path);
    let node = root;
    for (const segment of folder ? folder.split("/") : []) {
      let child = node.folders.find((f) => f.name === segment);
      if (!child) {
        child = { name: segment, path: node.path ? `${node.path}/${segment}` : segment, folders: [], documents: [] };
        node.folders.push(child);
      }
      node = child;
    }
    node.documents.push(doc);
  }
  return root;
}

const countDocuments = (folder: Folder): number => folder.documents.length + folder.folders.reduce((n, f) => n + countDocuments(f), 0);

function FolderContents({ folder }: { folder: Folder }) {
  return (
    <>
      {folder.documents.length > 0 ? (
        <section className="doc-group" aria-label={folder.path ? `Documents in ${folder.path}` : "Top level"}>
          <DocumentRows documents={folder.documents} />
        </section>
      ) : null}
      {folder.folders.map((child) => (
        <details key={child.path} className="doc-folder" open>
          <summary className="doc-group-title">
            <FolderIcon />
            <span>{child.name}/</span>
            <span className="doc-folder-count">{countDocuments(child)}</span>
          </summary>
          <div className="doc-folder-body">
            <FolderContents folder={child} />
          </div>
        </details>
      ))}
    </>
  );
}

function EmptyWorkspace({ canCreate }: { canCreate: boolean }) {
  if (!canCreate) {
    return (
      <div className="empty-state" data-testid="empty-state">
        <div className="empty-state-icon" aria-hidden="true">
          <DocumentIcon />
        </div>
        <h2>Nothing is shared with you yet</h2>
        <p>As a guest you see the documents people give you access to. Ask a member of the workspace to share one with you.</p>
      </div>
    );
  }
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
        Create the first one with <strong>New document</strong> above, or through the <code>documents</code> tool: connect an AI agent over
        MCP, or call the tool from a script with an API token, and run its <code>create</code> action with a path, a name and the first
        sections.
      </p>
      <pre className="code-sample">
        <code>{`documents ${example}`}</code>
      </pre>
      <p className="muted small">New documents appear here, by path or most recently edited first.</p>
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
