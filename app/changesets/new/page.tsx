import type { Metadata } from "next";
import { AppShell } from "@/app/_components/app-shell";
import { PageHeading } from "@/app/_components/page-parts";
import { attempt } from "@/app/_lib/quire";
import { firstParam, type SearchParams, withQuery } from "@/app/_lib/search-params";
import { requireUser } from "@/app/_lib/session";
import { getBridge } from "@/server/bridge";
import { NewChangesetForm } from "./new-changeset-form";
import "../../merge-requests/merge-requests.css";
import "../changesets.css";

export const metadata: Metadata = { title: "Open a changeset" };

/** The most documents the preview looks at (the first by path); the changeset itself gathers up to 200. */
const PREVIEW_LIMIT = 100;

export default async function NewChangesetPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const query = await searchParams;
  const source = firstParam(query.source)?.trim() ?? "";
  const target = firstParam(query.target)?.trim() || "main";
  const prefix = firstParam(query.prefix) ?? "";
  const user = await requireUser(withQuery("/changesets/new", { source, target, prefix }));
  const bridge = getBridge();
  // The documents it would gather: those under the prefix that have both branches (the tool also leaves out any
  // whose source brings nothing new).
  const preview = source
    ? await attempt(async () => {
        const { documents } = await bridge.callTool("documents", user.id, {
          action: "list",
          limit: PREVIEW_LIMIT,
          ...(prefix ? { pathPrefix: prefix } : {}),
        });
        const withBranches = await Promise.all(
          documents.map(async (d) => {
            const { branches } = await bridge.callTool("documents", user.id, { action: "list_branches", documentId: d.documentId });
            const names = new Set(branches.map((b) => b.name));
            return names.has(source) && names.has(target) ? d : null;
          }),
        );
        return withBranches.filter((d) => d !== null);
      })
    : null;

  return (
    <AppShell user={user}>
      <PageHeading
        title="Open a changeset"
        description="Gather the documents where a branch carries a change, review them together and merge them in one step."
      />
      <form method="get" action="/changesets/new" className="panel form cs-gather" aria-label="Find documents">
        <div className="cs-fields">
          <label className="field">
            <span>Source branch</span>
            <input name="source" defaultValue={source} required maxLength={100} placeholder="rename-product" />
          </label>
          <label className="field">
            <span>Target branch</span>
            <input name="target" defaultValue={target} required maxLength={100} />
          </label>
          <label className="field">
            <span>Path prefix</span>
            <input name="prefix" defaultValue={prefix} maxLength={500} placeholder="handbook/ (empty: every document)" />
          </label>
        </div>
        <button type="submit" className="button">
          Find documents
        </button>
      </form>
      {preview && !preview.ok ? (
        <p className="form-error" role="alert">
          {preview.message}
        </p>
      ) : null}
      {preview?.ok ? (
        <section className="mr-section" aria-labelledby="gathered-title">
          <h2 id="gathered-title">
            {preview.value.length} document{preview.value.length === 1 ? "" : "s"} with <code>{source}</code> and <code>{target}</code>
          </h2>
          {preview.value.length > 0 ? (
            <>
              <ul className="cs-preview" data-testid="changeset-preview">
                {preview.value.map((d) => (
                  <li key={d.documentId}>
                    <span className="cs-path">{d.path}</span> <span className="muted small">{d.name}</span>
                  </li>
                ))}
              </ul>
              <NewChangesetForm authorId={user.id} source={source} target={target} prefix={prefix} />
            </>
          ) : (
            <p className="muted">No document you can read has both branches here. Check the branch names and the prefix.</p>
          )}
        </section>
      ) : null}
    </AppShell>
  );
}
