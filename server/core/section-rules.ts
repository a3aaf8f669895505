/** Rules on section content that hold wherever sections are written. */
import { type Block, firstLocalFileBlock } from "./blocks";
import { DomainError } from "./errors";

const normalizeHeading = (s: string) => s.replace(/\s+/g, " ").trim().toLowerCase();

/**
 * The section name is rendered as the section's H2, so content that starts by
 * repeating it as an H2 (ATX "## Name" or setext "Name\n---") would show it twice.
 */
export function startsWithDuplicateHeading(name: string, content: readonly Block[]): boolean {
  const firstText = content.find((b) => b.blockType === "text");
  if (firstText?.blockType !== "text") return false;
  const lines = firstText.text.replace(/^\s+/, "").split("\n");
  const first = lines[0] ?? "";
  const atx = /^ {0,3}##[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/.exec(first);
  if (atx) return normalizeHeading(atx[1]!) === normalizeHeading(name);
  const setext = /^ {0,3}-+[ \t]*$/.test(lines[1] ?? "");
  return setext && normalizeHeading(first) === normalizeHeading(name);
}

/** Checks the rules a section's name and content must satisfy before anything is stored. */
export function assertSectionContentAllowed(name: string, content: readonly Block[], where: string): void {
  const fileIndex = firstLocalFileBlock(content);
  if (fileIndex >= 0) {
    throw new DomainError(
      "VALIDATION_FAILED",
      `${where}.content[${fileIndex}]: image blocks with type "file" name a local path the server cannot read. Use the stdio proxy (\`npx quire mcp-proxy\`), which uploads the file for you, or upload it with the \`upload_url\` tool and send a type "storage" block with the returned key.`,
      { issues: [{ path: `${where}.content.${fileIndex}.type`, message: 'type "file" is accepted only by the stdio proxy' }] },
    );
  }
  if (startsWithDuplicateHeading(name, content)) {
    throw new DomainError(
      "DUPLICATE_HEADING",
      `${where}: the content starts with the heading "## ${name}", but the section name is already rendered as its H2 heading. Remove that heading from the content.`,
      { sectionName: name },
    );
  }
}
