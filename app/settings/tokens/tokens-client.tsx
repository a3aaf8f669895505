"use client";

import { useState } from "react";
import { FormError, field, OptionalExpiryField, optionalNumber, useActionForm } from "@/app/_components/action-form";
import { ActionConfirmButton } from "@/app/_components/confirm-button";
import { CopySnippet } from "@/app/_components/copy";
import { OneTimeSecret } from "@/app/_components/one-time-secret";
import { SettingsSection } from "@/app/_components/page-parts";
import { useApiTokensTool } from "@/app/_lib/tool-call";
import type { ApiTokensResults } from "@/server/actions/api-tokens";
import { httpClientConfig, mcpEndpoint, stdioClientConfig, stdioCommand, TOKEN_PLACEHOLDER } from "./mcp-config";

/** What an API token may do, said plainly where tokens are made. */
export const TOKEN_RULE =
  "An API token acts as an agent on every face (MCP and the API): what it can do is capped by each document's AI access, " +
  "and it cannot change permissions, share links, roles, invites, tokens or the workspace's name. Only you, signed in, can.";

/** What creating a token answers: the token (shown once) and its record. */
type Created = ApiTokensResults["create"];

/**
 * Creating a token and connecting an MCP client with it: the client
 * configuration carries the new token while it is shown, a placeholder
 * otherwise. `publicUrl` is the base URL the server hands out.
 */
export function TokenSetup({ publicUrl }: { publicUrl: string }) {
  const [created, setCreated] = useState<Created | null>(null);
  const token = created?.token ?? TOKEN_PLACEHOLDER;

  return (
    <>
      <SettingsSection id="create-token-heading" title="Create a token" description={<span data-testid="token-rule">{TOKEN_RULE}</span>}>
        <div className="panel settings-panel">
          <CreateTokenForm created={created} onCreated={setCreated} />
        </div>
      </SettingsSection>

      <SettingsSection
        id="mcp-clients-heading"
        title="Connect an MCP client"
        description={
          <>
            Quire speaks MCP at <code data-testid="mcp-endpoint">{mcpEndpoint(publicUrl)}</code> and takes the token as{" "}
            <code>Authorization: Bearer</code>.{" "}
            {created ? "The configuration below carries your new token." : `Create a token, or put one in place of ${TOKEN_PLACEHOLDER}.`}
          </>
        }
      >
        <div className="panel settings-panel mcp-config">
          <p className="muted small">
            For clients that connect over HTTP: add this to their <code>mcpServers</code> (Claude Code: <code>.mcp.json</code>; Cursor:{" "}
            <code>~/.cursor/mcp.json</code>). VS Code’s <code>.vscode/mcp.json</code> takes the same entry under <code>servers</code>.
          </p>
          <CopySnippet label="HTTP (Streamable HTTP)" code={httpClientConfig(publicUrl, token)} testId="mcp-config-http" />
          <p className="muted small">
            For clients that only start local commands (Claude Desktop, for example): the stdio proxy, run from a Quire checkout, forwards
            every tool to this server and also uploads local image files.
          </p>
          <CopySnippet label="stdio (quire mcp-proxy)" code={stdioClientConfig(publicUrl, token)} testId="mcp-config-stdio" />
          <CopySnippet label="The same proxy in a terminal" code={stdioCommand(publicUrl, token)} testId="mcp-command-stdio" />
        </div>
      </SettingsSection>
    </>
  );
}

function CreateTokenForm({ created, onCreated }: { created: Created | null; onCreated: (created: Created) => void }) {
  const apiTokens = useApiTokensTool();
  const { pending, error, onSubmit } = useActionForm(
    (data) => apiTokens({ action: "create", label: field(data, "label"), expiresInDays: optionalNumber(data, "expiresInDays") }),
    onCreated,
  );

  return (
    <>
      <form className="inline-form" onSubmit={onSubmit} aria-label="Create an API token">
        <label className="field field-grow">
          <span>Label</span>
          <input name="label" type="text" required maxLength={100} placeholder="What is it for? e.g. Claude on my laptop" />
        </label>
        <OptionalExpiryField />
        <button type="submit" className="button button-primary" disabled={pending}>
          {pending ? "Creating…" : "Create token"}
        </button>
      </form>
      <FormError error={error} />
      {created ? (
        <OneTimeSecret
          title={`New token${created.tokenInfo.label ? ` “${created.tokenInfo.label}”` : ""}`}
          value={created.token}
          testId="new-token"
          hint="Copy it now, or the configuration below: Quire stores only a hash of the token and cannot show it again. Keep it secret, like a password."
        />
      ) : null}
    </>
  );
}

export function RevokeTokenButton({ tokenId, label }: { tokenId: string; label: string }) {
  const apiTokens = useApiTokensTool();
  return (
    <ActionConfirmButton
      label="Revoke"
      question={`Revoke “${label}”?`}
      confirmLabel="Revoke"
      pendingLabel="Revoking…"
      action={() => apiTokens({ action: "revoke", tokenId })}
    />
  );
}

export function RevokeAppButton({ grantId, name }: { grantId: string; name: string }) {
  const apiTokens = useApiTokensTool();
  return (
    <ActionConfirmButton
      label="Revoke"
      question={`Disconnect “${name}”?`}
      confirmLabel="Revoke"
      pendingLabel="Revoking…"
      action={() => apiTokens({ action: "revoke_app", grantId })}
    />
  );
}
