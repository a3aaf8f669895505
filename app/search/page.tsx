import type { Metadata } from "next";
import Link from "next/link";
import { AppShell } from "@/app/_components/app-shell";
import { ErrorPanel } from "@/app/_components/error-panel";
import { attempt, UUID_PATTERN } from "@/app/_lib/quire";
import { firstParam, type SearchParams, withQuery } from "@/app/_lib/search-params";
import { requireUser } from "@/app/_lib/session";
import { getBridge } from "@/server/bridge";
import { HitLink } from "./hit-link";
import { hitHref, hitTitle, KIND_LABELS, resultCount, type SearchHit, type SearchResult, Snippet } from "./hit";
import "./search.css";

export const metadata: Metadata = { title: "Search" };

const PAGE_SIZE = 20;
const KINDS = Object.keys(KIND_LABELS) as Array<SearchHit["kind"]>;

export default async function SearchPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const params = await searchParams;
  const filters = {
    q: firstParam(params.q)?.trim().slice(0, 200),
    kind: KINDS.find((k) => k === firstParam(params.kind)),
    branch: firstParam(params.branch)?.trim().slice(0, 200),
    path: firstParam(params.path)?.slice(0, 500),
    tag: UUID_PATTERN.test(firstParam(params.tag) ?? "") ? firstParam(params.tag) : undefined,
    cursor: firstParam(params.cursor),
  };
  const user = await requireUser(withQuery("/search", filters));

  const result = filters.q
    ? await attempt(
        async (): Promise<SearchResult> =>
          getBridge().callTool("search", user.id, {
            query: filters.q!,
            limit: PAGE_SIZE,
            ...(filters.kind ? { kind: filters.kind } : {}),
            ...(filters.branch ? { branchName: filters.branch } : {}),
            ...(filters.path ? { pathPrefix: filters.path } : {}),
            ...(filters.tag ? { tagId: filters.tag } : {}),
            ...(filters.cursor ? { cursor: filters.cursor } : {}),
          }),
      )
    : null;

  return (
    <AppShell user={user}>
      <div className="search-page">
        <h1>Search</h1>
        <form className="search-form" action="/search" method="get" aria-label="Search">
          <div className="search-query-row">
            <label className="visually-hidden" htmlFor="search-q">
              Search for
            </label>
            <input
              id="search-q"
              type="search"
              name="q"
              defaultValue={filters.q ?? ""}
              placeholder="Words, &quot;a phrase&quot;, -excluded"
              maxLength={200}
              autoComplete="off"
            />
            <button type="submit" className="button button-primary">
              Search
            </button>
          </div>
          <div className="search-filters">
            <label>
              <span>Kind</span>
              <select name="kind" defaultValue={filters.kind ?? ""}>
                <option value="">Everything</option>
                {KINDS.map((kind) => (
                  <option key={kind} value={kind}>
                    {KIND_LABELS[kind]}s
                  </option>
                ))}
              </select>
            </label>
            <label>
              <span>Path starts with</span>
              <input type="text" name="path" defaultValue={filters.path ?? ""} placeholder="handbook/" maxLength={500} />
            </label>
            <label>
              <span>Branch</span>
              <input type="text" name="branch" defaultValue={filters.branch ?? ""} placeholder="default branches" maxLength={200} />
            </label>
            {filters.tag ? <input type="hidden" name="tag" value={filters.tag} /> : null}
          </div>
          {filters.tag ? (
            <p className="muted small">
              Only documents with one tag.{" "}
              <Link href={withQuery("/search", { ...filters, tag: undefined, cursor: undefined })}>Any tag</Link>
            </p>
          ) : null}
        </form>

        {result === null ? (
          <p className="muted search-hint">
            Search document names and paths, section text, comment threads and merge requests you can read. Press <kbd>Ctrl</kbd>{" "}
            <kbd>K</kbd> on any page to jump to a section.
          </p>
        ) : !result.ok ? (
          <ErrorPanel title="Could not search" code={result.code} message={result.message} />
        ) : (
          <Results result={result.value} filters={filters} />
        )}
      </div>
    </AppShell>
  );
}

function Results({ result, filters }: { result: SearchResult; filters: Record<string, string | undefined> }) {
  if (result.total === 0) {
    return (
      <p className="search-summary" role="status">
        Nothing found for <strong>{filters.q}</strong>
        {filters.branch ? ` on branch ${filters.branch}` : ""}.
      </p>
    );
  }
  return (
    <>
      <p className="search-summary" role="status">
        {resultCount(result)}
        {result.correctedTo ? (
          <>
            {" "}
            for <em>{result.correctedTo.join(" ")}</em> (nothing matched <strong>{filters.q}</strong> as typed)
          </>
        ) : null}
      </p>
      <ol className="search-results" data-testid="search-results">
        {result.hits.map((hit) => (
          <li key={`${hit.kind}:${hit.documentId}:${hit.branchName}:${hit.sectionId}:${hit.commentId}:${hit.mergeRequestId}`}>
            <HitLink className="search-hit" href={hitHref(hit)}>
              <span className="search-hit-title">
                <span className={`search-kind search-kind-${hit.kind}`}>{KIND_LABELS[hit.kind]}</span>
                {hitTitle(hit)}
              </span>
              <span className="search-hit-where">
                {hit.kind === "document" ? hit.path : `${hit.documentName} · ${hit.path}`}
                {" · "}
                <span className="search-hit-branch">{hit.branchName}</span>
              </span>
              <span className="search-snippet" data-testid="search-snippet">
                <Snippet parts={hit.snippet} />
              </span>
            </HitLink>
          </li>
        ))}
      </ol>
      {result.nextCursor ? (
        <p className="search-more">
          <Link className="button" href={withQuery("/search", { ...filters, cursor: result.nextCursor })}>
            More results
          </Link>
        </p>
      ) : null}
    </>
  );
}
