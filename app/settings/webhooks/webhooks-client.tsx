"use client";

import { useState } from "react";
import { FormError, field, useActionForm } from "@/app/_components/action-form";
import { ActionConfirmButton } from "@/app/_components/confirm-button";
import { OneTimeSecret } from "@/app/_components/one-time-secret";
import { useWebhooksTool } from "@/app/_lib/tool-call";
import type { WebhookEvent } from "@/db/schema-webhooks";
import type { WebhooksResults } from "@/server/actions/webhooks";

type Created = WebhooksResults["create"];

/** Registering a hook: its URL and events; the signing secret is shown once. */
export function CreateWebhookForm({ events }: { events: readonly Exclude<WebhookEvent, "webhook.test">[] }) {
  const webhooks = useWebhooksTool();
  const [created, setCreated] = useState<Created | null>(null);
  const { pending, error, onSubmit } = useActionForm(
    (data) =>
      webhooks({
        action: "create",
        url: field(data, "url"),
        events: events.filter((event) => data.get(event) === "on"),
      }),
    setCreated,
  );
  return (
    <>
      <form className="webhook-form" onSubmit={onSubmit} aria-label="Add a webhook">
        <label className="field">
          <span>URL</span>
          <input name="url" type="url" required maxLength={2000} placeholder="https://example.com/quire-events" />
        </label>
        <fieldset className="webhook-events">
          <legend>Events</legend>
          {events.map((event) => (
            <label key={event} className="checkbox">
              <input type="checkbox" name={event} defaultChecked /> <code>{event}</code>
            </label>
          ))}
        </fieldset>
        <button type="submit" className="button button-primary" disabled={pending}>
          {pending ? "Adding…" : "Add webhook"}
        </button>
      </form>
      <FormError error={error} />
      {created ? (
        <OneTimeSecret
          title={`Signing secret for ${created.webhook.url}`}
          value={created.secret}
          testId="new-webhook-secret"
          hint="Copy it now: Quire shows it once. Check each delivery's Quire-Signature (t=…,v1=HMAC-SHA256 of “t.body”) with it."
        />
      ) : null}
    </>
  );
}

/** Send test event, Enable (when disabled) and Delete for one hook. */
export function WebhookActions({ webhookId, url, disabled }: { webhookId: string; url: string; disabled: boolean }) {
  const webhooks = useWebhooksTool();
  return (
    <div className="webhook-actions">
      <ActionConfirmButton
        label="Send test event"
        question={`Send a webhook.test event to ${url}?`}
        confirmLabel="Send"
        pendingLabel="Sending…"
        action={() => webhooks({ action: "test", webhookId })}
      />
      {disabled ? (
        <ActionConfirmButton
          label="Enable"
          question={`Enable deliveries to ${url} again?`}
          confirmLabel="Enable"
          pendingLabel="Enabling…"
          action={() => webhooks({ action: "enable", webhookId })}
        />
      ) : null}
      <ActionConfirmButton
        label="Delete"
        question={`Delete the webhook to ${url} and its delivery log?`}
        confirmLabel="Delete"
        pendingLabel="Deleting…"
        action={() => webhooks({ action: "delete", webhookId })}
      />
    </div>
  );
}
