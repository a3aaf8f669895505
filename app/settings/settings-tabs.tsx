import Link from "next/link";
import { PageHeading } from "@/app/_components/page-parts";

const TABS = [
  { key: "members", href: "/settings/members", label: "Members" },
  { key: "tokens", href: "/settings/tokens", label: "API tokens" },
  { key: "workspace", href: "/settings/workspace", label: "Workspace" },
  { key: "notifications", href: "/settings/notifications", label: "Notifications" },
  { key: "webhooks", href: "/settings/webhooks", label: "Webhooks" },
] as const;

/** The heading and tab bar shared by the settings pages. */
export function SettingsHeader({ active, description }: { active: (typeof TABS)[number]["key"]; description: string }) {
  return (
    <>
      <PageHeading title="Settings" description={description} />
      <nav className="tabs" aria-label="Settings">
        {TABS.map((tab) => (
          <Link key={tab.key} href={tab.href} className="tab" aria-current={tab.key === active ? "page" : undefined}>
            {tab.label}
          </Link>
        ))}
      </nav>
    </>
  );
}
