import type { Metadata } from "next";
import { AppShell } from "@/app/_components/app-shell";
import { ErrorPanel } from "@/app/_components/error-panel";
import { SettingsSection } from "@/app/_components/page-parts";
import { requireUser } from "@/app/_lib/session";
import { loadWorkspace } from "@/app/_lib/workspace";
import { SettingsHeader } from "../settings-tabs";
import { WorkspaceNameForm } from "./workspace-client";
import "../settings.css";

export const metadata: Metadata = { title: "Workspace" };

export default async function WorkspaceSettingsPage() {
  const user = await requireUser("/settings/workspace");
  const loaded = await loadWorkspace(user.id);
  if (!loaded.ok) {
    return (
      <AppShell user={user}>
        <ErrorPanel title="Could not load the workspace" code={loaded.code} message={loaded.message} />
      </AppShell>
    );
  }
  const { workspace, viewer } = loaded.value;

  return (
    <AppShell user={user}>
      <SettingsHeader active="workspace" description="The workspace everyone here shares." />

      <SettingsSection
        id="workspace-name-heading"
        title="Name"
        description={
          viewer.canRename
            ? "Shown to every member in the header. Up to 80 characters."
            : "Shown to every member in the header. Owners and admins can change it."
        }
      >
        <div className="panel settings-panel">
          {viewer.canRename ? (
            <WorkspaceNameForm name={workspace.name} />
          ) : (
            <p className="workspace-name-readonly" data-testid="workspace-name-readonly">
              {workspace.name}
            </p>
          )}
        </div>
      </SettingsSection>
    </AppShell>
  );
}
