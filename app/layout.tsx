import type { Metadata, Viewport } from "next";
import { cookies } from "next/headers";
import type { ReactNode } from "react";
import { parseTheme, THEME_COOKIE, themeAttribute } from "@/app/_lib/theme";
import { TRPCProvider } from "@/app/_lib/trpc";
import "./globals.css";

export const metadata: Metadata = {
  title: { default: "Quire", template: "%s · Quire" },
  description: "Collaborative documents with branches, commits and merge requests.",
  // public/favicon.ico (16, 32 and 48 px) for every browser, public/icon.svg where SVG icons are understood.
  icons: {
    icon: [
      { url: "/favicon.ico", sizes: "any" },
      { url: "/icon.svg", type: "image/svg+xml" },
    ],
  },
};

export const viewport: Viewport = {
  width: "device-width",
  initialScale: 1,
  // Both schemes: the stylesheet follows the system unless the theme switch chose one (data-theme on <html>).
  colorScheme: "light dark",
};

export default async function RootLayout({ children }: { children: ReactNode }) {
  // The chosen theme is rendered on the server, so the first paint is already in it.
  const theme = parseTheme((await cookies()).get(THEME_COOKIE)?.value);
  return (
    <html lang="en" data-theme={themeAttribute(theme)}>
      <body>
        <TRPCProvider>{children}</TRPCProvider>
      </body>
    </html>
  );
}
