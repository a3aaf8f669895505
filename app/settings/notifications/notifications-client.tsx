"use client";

import { useState } from "react";
import { FormError, useActionForm } from "@/app/_components/action-form";
import { toolCall } from "@/app/_lib/tool-call";
import { useTRPCClient } from "@/app/_lib/trpc";
import type { notificationsTool } from "@/server/actions/notifications";
import type { EmailSetting } from "@/db/schema";

const CHOICES: Array<{ value: EmailSetting; label: string; hint: string }> = [
  { value: "all", label: "Everything", hint: "Reviews requested, mentions, replies, and what happens to your merge requests." },
  { value: "direct", label: "Only what is addressed to me", hint: "Reviews requested of you and mentions." },
  { value: "none", label: "Nothing", hint: "No email; your inbox still collects everything." },
];

/** Chooses what goes out by email; saved at once, for this person only. */
export function EmailSettingForm({ email }: { email: EmailSetting }) {
  const notifications = toolCall<typeof notificationsTool>(useTRPCClient().notifications.mutate);
  const [saved, setSaved] = useState<EmailSetting | null>(null);
  const { pending, error, onSubmit } = useActionForm(
    (data) => notifications({ action: "set_settings", email: String(data.get("email")) as EmailSetting }),
    (result) => setSaved("email" in result ? result.email : null),
  );
  return (
    <form onSubmit={onSubmit} aria-label="Email notifications" className="email-setting-form">
      <fieldset className="choice-list" key={email}>
        <legend className="visually-hidden">Email me</legend>
        {CHOICES.map((choice) => (
          <label key={choice.value} className="choice">
            <input type="radio" name="email" value={choice.value} defaultChecked={choice.value === email} />
            <span>
              <strong>{choice.label}</strong>
              <small className="muted">{choice.hint}</small>
            </span>
          </label>
        ))}
      </fieldset>
      <button type="submit" className="button button-primary" disabled={pending}>
        {pending ? "Saving…" : "Save"}
      </button>
      <FormError error={error} />
      {saved !== null && !error ? (
        <p className="form-saved" role="status">
          Saved.
        </p>
      ) : null}
    </form>
  );
}
