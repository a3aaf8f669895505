import type { Metadata } from "next";
import { AppShell } from "@/app/_components/app-shell";
import { ErrorPanel } from "@/app/_components/error-panel";
import { DataTable, SettingsSection } from "@/app/_components/page-parts";
import { TimeAgo } from "@/app/_components/time-ago";
import { attempt } from "@/app/_lib/quire";
import { requireUser } from "@/app/_lib/session";
import { WEBHOOK_EVENTS } from "@/db/schema-webhooks";
import { getBridge } from "@/server/bridge";
import { SettingsHeader } from "../settings-tabs";
import { CreateWebhookForm, WebhookActions } from "./webhooks-client";
import "../settings.css";
import "./webhooks.css";

export const metadata: Metadata = { title: "Webhooks" };

export default async function WebhooksPage() {
  const user = await requireUser("/settings/webhooks");
  const listed = await attempt(() => getBridge().webhooks(user.id, { action: "list" }));
  const description = "Webhooks tell other services what happens in the workspace: each event is POSTed to the URL as signed JSON.";
  if (!listed.ok) {
    return (
      <AppShell user={user}>
        <SettingsHeader active="webhooks" description={description} />
        <ErrorPanel title="Could not list the webhooks" code={listed.code} message={listed.message} />
      </AppShell>
    );
  }
  const { webhooks } = listed.value;
  return (
    <AppShell user={user}>
      <SettingsHeader active="webhooks" description={description} />
      <SettingsSection
        id="add-webhook-heading"
        title="Add a webhook"
        description="Owners and admins, signed in, manage webhooks (never an API token). The URL must be https on a public address."
      >
        <div className="panel settings-panel">
          <CreateWebhookForm events={WEBHOOK_EVENTS} />
        </div>
      </SettingsSection>
      <SettingsSection
        id="webhooks-heading"
        title="Webhooks"
        description={
          webhooks.length === 0
            ? "No webhooks yet."
            : "Failed deliveries are retried with backoff; a hook failing 10 times in a row is disabled."
        }
      >
        {webhooks.map((hook) => (
          <div key={hook.webhookId} className="panel webhook" data-testid="webhook" data-disabled={hook.disabledAt ? "true" : "false"}>
            <div className="webhook-head">
              <code className="webhook-url">{hook.url}</code>
              {hook.disabledAt ? (
                <span className="badge webhook-disabled">
                  Disabled <TimeAgo value={hook.disabledAt} /> after {hook.consecutiveFailures} failures
                </span>
              ) : null}
            </div>
            <p className="muted small">{hook.events.join(", ")}</p>
            <WebhookActions webhookId={hook.webhookId} url={hook.url} disabled={hook.disabledAt !== null} />
            {hook.deliveries.length === 0 ? (
              <p className="muted small">No deliveries yet.</p>
            ) : (
              <div className="table-card">
                <DataTable testId="webhook-deliveries" columns={["Event", "When", "Status", "Attempts", "Last answer"]}>
                  {hook.deliveries.map((delivery) => (
                    <tr key={delivery.deliveryId} data-status={delivery.status}>
                      <td>
                        <code>{delivery.event}</code>
                      </td>
                      <td className="muted small" data-label="When">
                        <TimeAgo value={delivery.createdAt} />
                      </td>
                      <td data-label="Status">{delivery.status}</td>
                      <td data-label="Attempts">{delivery.attempts}</td>
                      <td className="muted small" data-label="Last answer">
                        {delivery.lastStatus !== null ? `HTTP ${delivery.lastStatus}` : (delivery.lastError ?? "—")}
                      </td>
                    </tr>
                  ))}
                </DataTable>
              </div>
            )}
          </div>
        ))}
      </SettingsSection>
    </AppShell>
  );
}
