/**
 * What the live view starts from, built on the server from the page's `read`:
 * each section's content and downloads, its permission badges, its "See
 * also" list as the page renders it, and whether this person edits it.
 */
import type { ReactNode } from "react";
import type { DocumentSection } from "@/app/_lib/quire";
import type { InitialSection } from "./live-section";

export function sectionBadges(section: DocumentSection): string[] {
  return [
    section.defaultPermission ? `Team: ${section.defaultPermission}` : null,
    section.aiAccess ? `AI: ${section.aiAccess}` : null,
  ].filter((b): b is string => b !== null);
}

export function initialSections(
  sections: readonly DocumentSection[],
  options: { editable: (section: DocumentSection) => boolean; references: (section: DocumentSection) => ReactNode },
): Record<string, InitialSection> {
  return Object.fromEntries(
    sections.map((section) => [
      section.sectionId,
      {
        name: section.name,
        content: section.content,
        downloads: section.downloads,
        badges: sectionBadges(section),
        references: section.references.length > 0 ? options.references(section) : undefined,
        editable: options.editable(section),
      },
    ]),
  );
}
