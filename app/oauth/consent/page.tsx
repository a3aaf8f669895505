import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { AuthCard } from "@/app/_components/auth-card";
import type { SearchParams } from "@/app/_lib/search-params";
import { requireUser } from "@/app/_lib/session";
import { getBridge } from "@/server/bridge";
import "./consent.css";

export const metadata: Metadata = { title: "Connect an app" };

/**
 * The OAuth consent page: the authorization endpoint (server/http/oauth.ts)
 * sends a signed-in person here with the client's request; the page names the
 * client, where it sends them back and what it may do, and its form posts the
 * answer to /oauth/authorize/decision, which accepts it only from this site's
 * own pages (Origin) and the person's session.
 */
export default async function ConsentPage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const params = await searchParams;
  const fields: Record<string, string> = {};
  for (const [name, value] of Object.entries(params)) {
    const first = Array.isArray(value) ? value[0] : value;
    if (first !== undefined) fields[name] = first;
  }
  const query = new URLSearchParams(fields).toString();
  const user = await requireUser(`/oauth/consent?${query}`);
  const view = await getBridge().oauthConsent(fields);
  if (view.kind === "redirect") redirect(view.location);
  if (view.kind === "refused") {
    return (
      <AuthCard>
        <h1>This app cannot connect</h1>
        <p className="form-error" role="alert">
          {view.message}
        </p>
        <p className="muted">Nothing was shared with it. Ask whoever made the app to check its settings.</p>
      </AuthCard>
    );
  }
  return (
    <AuthCard>
      <h1>
        Connect <span data-testid="consent-client">{view.clientName}</span>?
      </h1>
      <p className="muted">
        Signed in as {user.name} ({user.email}).
      </p>
      <dl className="consent-facts">
        <dt>App</dt>
        <dd>
          {view.clientName}{" "}
          <span className="muted small" title={view.clientId}>
            {view.registration === "metadata_document" ? `(${view.clientId})` : "(registered itself with this server)"}
          </span>
        </dd>
        <dt>Sends you back to</dt>
        <dd data-testid="consent-redirect-host">{view.redirectHost}</dd>
        <dt>It asks to</dt>
        <dd data-testid="consent-scope">{view.scope === "write" ? "read and write your documents" : "read your documents"}</dd>
      </dl>
      <p className="small">
        It works as an agent for you, over MCP: it reaches only what you can, within each document&apos;s AI access setting, and it can
        never change access, members, invites or tokens. You can disconnect it at any time in Settings → API tokens.
      </p>
      <form method="post" action="/oauth/authorize/decision" className="consent-form">
        {Object.entries(fields).map(([name, value]) => (
          <input key={name} type="hidden" name={name} value={value} />
        ))}
        <div className="button-row">
          {view.scope === "write" ? (
            <>
              <button type="submit" name="decision" value="allow_write" className="button button-primary">
                Allow read and write
              </button>
              <button type="submit" name="decision" value="allow_read" className="button">
                Allow read only
              </button>
            </>
          ) : (
            <button type="submit" name="decision" value="allow_read" className="button button-primary">
              Allow reading
            </button>
          )}
          <button type="submit" name="decision" value="deny" className="button button-quiet">
            Deny
          </button>
        </div>
      </form>
    </AuthCard>
  );
}
