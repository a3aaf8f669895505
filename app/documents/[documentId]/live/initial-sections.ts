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
  options: {
    /** Whether this person edits the branch: sections that follow it leave `editable` out. */
    editsByDefault: boolean;
    editable: (section: DocumentSection) => boolean;
    references: (section: DocumentSection) => ReactNode;
  },
): Record<string, InitialSection> {
  return Object.fromEntries(
    sections.map((section) => {
      const initial: InitialSection = { name: section.name, content: section.content };
      if (Object.keys(section.downloads).length > 0) initial.downloads = section.downloads;
      const badges = sectionBadges(section);
      if (badges.length > 0) initial.badges = badges;
      if (section.references.length > 0) initial.references = options.references(section);
      const editable = options.editable(section);
      if (editable !== options.editsByDefault) initial.editable = editable;
      return [section.sectionId, initial];
    }),
  );
}
