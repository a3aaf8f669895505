/**
 * A section as markdown text, the form merge requests diff. Deterministic:
 * the same SectionVersion always renders to the same text, so equal blobs give
 * empty diffs. Binary payloads (base64 images) are summarised, never inlined.
 *
 *   ## <name>
 *
 *   <block 1>
 *
 *   <block 2>
 *
 *   → reference: <displayTitle|targetDocumentId>#<targetSectionId|''>
 *
 *   <!-- defaultPermission: read -->
 *
 *   <!-- aiAccess: none -->
 */
import type { Block } from "./blocks";
import type { SectionVersion } from "./document-model";

/** How many base64 characters of an inline image the text shows. */
const BASE64_PREVIEW_CHARS = 16;

/** Decoded size of a base64 payload, in bytes. */
export function base64ByteLength(data: string): number {
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

/** An image's alt text and caption as markdown writes them: `![alt](target "caption")`. */
function imageMarkdown(alt: string | undefined, target: string, caption: string | undefined): string {
  const escaped = (text: string, special: RegExp) => text.replace(special, "\\$&").replace(/\s*\n\s*/g, " ");
  return `![${escaped(alt ?? "", /[\\[\]]/g)}](${target}${caption ? ` "${escaped(caption, /[\\"]/g)}"` : ""})`;
}

function imageToMarkdown(block: Extract<Block, { blockType: "image" }>): string {
  switch (block.type) {
    case "url":
      return imageMarkdown(block.alt, block.url, block.caption);
    case "base64":
      return imageMarkdown(
        block.alt ?? "image",
        `data:${block.mediaType};base64,${block.data.slice(0, BASE64_PREVIEW_CHARS)}… (${base64ByteLength(block.data)} bytes)`,
        block.caption,
      );
    case "storage":
      return imageMarkdown(block.alt ?? "image", `storage:${block.key}`, block.caption);
    case "file":
      // Only the stdio proxy accepts local files (it converts them to storage);
      // rendered anyway so the function is total.
      return `![image](file:${block.path})`;
  }
}

export function blockToMarkdown(block: Block): string {
  switch (block.blockType) {
    case "text":
      return block.text;
    case "image":
      return imageToMarkdown(block);
    case "document":
      return `[${block.filename}](${block.url})`;
    case "csv":
      return `[${block.filename}](storage:${block.key}) — CSV, headers: ${block.headers.join(", ")}, ${block.rowCount} rows`;
    case "file":
      return `[${block.filename}](storage:${block.key})`;
    case "database_embed":
      return `[database](database:${block.databaseId})`;
  }
}

export function sectionToMarkdown(version: SectionVersion): string {
  const parts: string[] = [`## ${version.name}`];
  for (const block of version.content) parts.push(blockToMarkdown(block));
  for (const ref of version.references) {
    parts.push(`→ reference: ${ref.displayTitle ?? ref.targetDocumentId}#${ref.targetSectionId ?? ""}`);
  }
  if (version.defaultPermission !== null) parts.push(`<!-- defaultPermission: ${version.defaultPermission} -->`);
  if (version.aiAccess !== null) parts.push(`<!-- aiAccess: ${version.aiAccess} -->`);
  return `${parts.join("\n\n")}\n`;
}
