import type { Metadata } from "next";
import Link from "next/link";
import { AppShell } from "@/app/_components/app-shell";
import { ErrorPanel } from "@/app/_components/error-panel";
import { SettingsSection } from "@/app/_components/page-parts";
import { attempt } from "@/app/_lib/quire";
import { requireUser } from "@/app/_lib/session";
import { getBridge } from "@/server/bridge";
import { SettingsHeader } from "../settings-tabs";
import { EmailSettingForm } from "./notifications-client";
import "../settings.css";
import "./notifications.css";

export const metadata: Metadata = { title: "Notifications" };

/** The signed-in person's own email setting for inbox items they have not read. */
export default async function NotificationSettingsPage() {
  const user = await requireUser("/settings/notifications");
  const settings = await attempt(() => getBridge().callTool("notifications", user.id, { action: "get_settings" }));
  return (
    <AppShell user={user}>
      <SettingsHeader active="notifications" description="How Quire tells you what needs you while you are away." />
      {settings.ok ? (
        <SettingsSection
          id="email-heading"
          title="Email"
          description={
            <>
              Items in your <Link href="/inbox">inbox</Link> that you have not read are emailed to {user.email}, a few minutes after they
              arrive and at most one email every few minutes.
            </>
          }
        >
          <div className="panel settings-panel">
            <EmailSettingForm email={settings.value.email} />
          </div>
        </SettingsSection>
      ) : (
        <ErrorPanel title="Could not load your settings" code={settings.code} message={settings.message} />
      )}
    </AppShell>
  );
}
