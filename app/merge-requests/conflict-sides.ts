/** Server side of the conflict choices (conflict-choices.tsx): what each branch holds for a conflicting section, read as the viewer may. */
import { attempt, type DocumentRead } from "@/app/_lib/quire";
import { readContent } from "@/app/documents/[documentId]/readable-content";
import { getBridge } from "@/server/bridge";
import type { ConflictSide, ConflictSides } from "./conflict-choices";

/** A section's blocks as the side-by-side view shows them: text blocks as written, other blocks by kind. */
function conflictText(content: unknown): string {
  return (readContent(content) ?? [])
    .map((block) =>
      !block.readable
        ? `[${block.blockType ?? "block"} that could not be shown]`
        : block.block.blockType === "text"
          ? block.block.text
          : `[${block.block.blockType}]`,
    )
    .join("\n\n");
}

/**
 * Each conflicting section's side on one branch. The branch is read whole: a conflict may be a section deleted on
 * this branch, which a read of named sections refuses for the whole batch (NOT_FOUND), while here it is simply
 * absent. A read that fails marks every side of this branch unread, with the server's reason, never as deleted.
 */
async function sidesOn(userId: string, documentId: string, branchName: string, sectionIds: string[]): Promise<Map<string, ConflictSide>> {
  if (sectionIds.length === 0) return new Map();
  const read = await attempt(async (): Promise<DocumentRead> => getBridge().callTool("read", userId, { documentId, branchName }));
  if (!read.ok) return new Map(sectionIds.map((id) => [id, { kind: "unread", message: read.message }]));
  const onBranch = new Map(read.value.sections.map((s) => [s.sectionId, s.content]));
  return new Map(
    sectionIds.map((id): [string, ConflictSide] => {
      const content = onBranch.get(id);
      return [id, content === undefined ? { kind: "deleted" } : { kind: "text", text: conflictText(content) }];
    }),
  );
}

/** What the source and the target branch of one document hold for each of its conflicting sections, as `userId` may read them. */
export async function conflictSides(
  userId: string,
  documentId: string,
  branches: { sourceBranch: string; targetBranch: string },
  sectionIds: string[],
): Promise<ConflictSides> {
  const [source, target] = await Promise.all([
    sidesOn(userId, documentId, branches.sourceBranch, sectionIds),
    sidesOn(userId, documentId, branches.targetBranch, sectionIds),
  ]);
  return Object.fromEntries(sectionIds.map((id) => [id, { source: source.get(id)!, target: target.get(id)! }]));
}
