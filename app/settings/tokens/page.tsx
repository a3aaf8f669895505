import type { Metadata } from "next";
import { AppShell } from "@/app/_components/app-shell";
import { ErrorPanel } from "@/app/_components/error-panel";
import { DataTable, SettingsSection } from "@/app/_components/page-parts";
import { TimeAgo } from "@/app/_components/time-ago";
import { attempt } from "@/app/_lib/quire";
import { requireUser } from "@/app/_lib/session";
import { loadWorkspace } from "@/app/_lib/workspace";
import { getBridge } from "@/server/bridge";
import { SettingsHeader } from "../settings-tabs";
import { RevokeAppButton, RevokeTokenButton, TokenSetup } from "./tokens-client";
import "../settings.css";

export const metadata: Metadata = { title: "API tokens" };

export default async function TokensPage() {
  const user = await requireUser("/settings/tokens");
  const [listed, workspace, connected] = await Promise.all([
    attempt(() => getBridge().apiTokens(user.id, { action: "list" })),
    loadWorkspace(user.id),
    attempt(() => getBridge().apiTokens(user.id, { action: "list_apps" })),
  ]);
  if (!workspace.ok) {
    return (
      <AppShell user={user}>
        <ErrorPanel title="Could not load the workspace" code={workspace.code} message={workspace.message} />
      </AppShell>
    );
  }
  if (!connected.ok) {
    return (
      <AppShell user={user}>
        <ErrorPanel title="Could not list your connected apps" code={connected.code} message={connected.message} />
      </AppShell>
    );
  }
  if (!listed.ok) {
    return (
      <AppShell user={user}>
        <ErrorPanel title="Could not list your API tokens" code={listed.code} message={listed.message} />
      </AppShell>
    );
  }
  const { tokens } = listed.value;
  const { apps } = connected.value;
  // The base URL is the server's to decide (QUIRE_PUBLIC_URL, else the origin this page was asked for).
  const { publicUrl } = workspace.value;
  const active = tokens.filter((t) => t.status === "active").length;

  return (
    <AppShell user={user}>
      <SettingsHeader active="tokens" description="Tokens let AI agents and scripts work in Quire for you, over MCP and the API." />

      <TokenSetup publicUrl={publicUrl} />

      <SettingsSection
        id="tokens-heading"
        title="Your tokens"
        description={
          tokens.length === 0
            ? "You have no tokens yet."
            : `${active} active of ${tokens.length}. Revoking a token stops it at once; it cannot be undone.`
        }
      >
        {tokens.length === 0 ? (
          <div className="table-card table-empty" data-testid="token-list">
            <p className="muted small">Tokens you create appear here, with when each was last used.</p>
          </div>
        ) : (
          <div className="table-card">
            <DataTable testId="token-list" columns={["Label", "Created", "Last used", "Expires", "Status"]}>
              {tokens.map((token) => (
                <tr key={token.tokenId} data-testid="token-row" data-status={token.status}>
                  <td>
                    <span className="token-label">{token.label ?? <span className="muted">(no label)</span>}</span>
                    <span className="token-id" title={token.tokenId}>
                      {token.tokenId.slice(0, 8)}
                    </span>
                  </td>
                  <td className="muted small" data-label="Created">
                    <TimeAgo value={token.createdAt} />
                  </td>
                  <td className="muted small" data-label="Last used">
                    {token.lastUsedAt ? <TimeAgo value={token.lastUsedAt} /> : "never"}
                  </td>
                  <td className="muted small" data-label="Expires">
                    {token.expiresAt ? <TimeAgo value={token.expiresAt} /> : "never"}
                  </td>
                  <td data-label="Status">
                    <span className={`status status-${token.status}`}>{token.status}</span>
                  </td>
                  <td className="cell-actions">
                    {token.status === "active" ? (
                      <RevokeTokenButton tokenId={token.tokenId} label={token.label ?? token.tokenId.slice(0, 8)} />
                    ) : null}
                  </td>
                </tr>
              ))}
            </DataTable>
          </div>
        )}
      </SettingsSection>

      <SettingsSection
        id="apps-heading"
        title="Connected apps"
        description={
          apps.length === 0
            ? "No apps are connected. MCP clients that speak OAuth connect with your consent, without a token to paste."
            : "Apps you allowed to work for you over MCP, by OAuth. Revoking one disconnects it at once."
        }
      >
        {apps.length === 0 ? (
          <div className="table-card table-empty" data-testid="app-list">
            <p className="muted small">Add this server's MCP URL in a client that connects by OAuth; it appears here once you allow it.</p>
          </div>
        ) : (
          <div className="table-card">
            <DataTable testId="app-list" columns={["App", "May", "Connected", "Last used"]}>
              {apps.map((app) => (
                <tr key={app.grantId} data-testid="app-row">
                  <td>
                    <span className="token-label">{app.name}</span>
                    <span className="token-id" title={app.clientId}>
                      {app.grantId.slice(0, 8)}
                    </span>
                  </td>
                  <td className="small" data-label="May">
                    {app.scope === "write" ? "read and write" : "read"}
                  </td>
                  <td className="muted small" data-label="Connected">
                    <TimeAgo value={app.connectedAt} />
                  </td>
                  <td className="muted small" data-label="Last used">
                    {app.lastUsedAt ? <TimeAgo value={app.lastUsedAt} /> : "never"}
                  </td>
                  <td className="cell-actions">
                    <RevokeAppButton grantId={app.grantId} name={app.name} />
                  </td>
                </tr>
              ))}
            </DataTable>
          </div>
        )}
      </SettingsSection>
    </AppShell>
  );
}
