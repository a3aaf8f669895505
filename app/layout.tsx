import type { Metadata, Viewport } from "next";
import type { ReactNode } from "react";
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
  colorScheme: "light",
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <TRPCProvider>{children}</TRPCProvider>
      </body>
    </html>
  );
}
