import Link from "next/link";

const TABS = [
  { key: "members", href: "/settings/members", label: "Members" },
  { key: "tokens", href: "/settings/tokens", label: "API tokens" },
] as const;

/** The heading and tab bar shared by the settings pages. */
export function SettingsHeader({ active, description }: { active: (typeof TABS)[number]["key"]; description: string }) {
  return (
    <>
      <div className="page-heading">
        <div>
          <h1>Settings</h1>
          <p className="muted">{description}</p>
        </div>
      </div>
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
