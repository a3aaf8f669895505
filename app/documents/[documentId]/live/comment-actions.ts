"use server";

/**
 * What the editor's comments ask of the server: the comment threads of a
 * branch's draft (stored comments with their authors, and the new ones typed
 * into the draft but not committed yet), and the people a comment may
 * mention. Both go through the bridge as the signed-in person, so a section
 * the person may not see brings no comment with it.
 */
import { type ActionResult, runAsUser } from "@/app/_lib/action-result";
import { type DocumentRead, listMembers } from "@/app/_lib/quire";
import { getBridge } from "@/server/bridge";
import { existingCommentTags, newCommentTags } from "@/server/core/comment-markup";
import type { Person } from "./actions";

export interface CommentThread {
  /** null for a comment typed into the draft and not committed yet. */
  commentId: string | null;
  sectionId: string;
  sectionName: string;
  /** The commented text. */
  text: string;
  body: string;
  authorName: string | null;
  createdAt: string | null;
  pending: boolean;
}

const text = (value: unknown): string => (typeof value === "string" ? value : "");

/** The branch's comments as its draft holds them, section by section in document order. */
export async function readCommentThreads(input: { documentId: unknown; branchName: unknown }): Promise<ActionResult<CommentThread[]>> {
  return runAsUser("comments", async (userId) => {
    const document: DocumentRead = await getBridge().callTool("read", userId, {
      documentId: text(input.documentId),
      branchName: text(input.branchName),
      includeDraft: true,
    });
    return document.sections.flatMap((section) => {
      const stored = new Map(section.comments.map((c) => [c.commentId, c]));
      const at = { sectionId: section.sectionId, sectionName: section.name };
      return section.content.flatMap((block) => {
        if (block.blockType !== "text") return [];
        const committed = existingCommentTags(block.text).flatMap((tag): CommentThread[] => {
          const comment = stored.get(tag.id);
          if (!comment) return [];
          const { body, authorName, createdAt } = comment;
          return [{ ...at, commentId: tag.id, text: tag.text, body, authorName, createdAt, pending: false }];
        });
        let typed: CommentThread[] = [];
        try {
          typed = newCommentTags(block.text, "draft").map((tag) => ({
            ...at,
            commentId: null,
            text: tag.text,
            body: tag.body,
            authorName: null,
            createdAt: null,
            pending: true,
          }));
        } catch {
          // Markup being typed may be unfinished; the commit will say what is wrong with it.
        }
        return [...committed, ...typed];
      });
    });
  });
}

/** Everyone in the workspace, for a comment's mentions. */
export async function readMentionable(): Promise<ActionResult<Person[]>> {
  return runAsUser("members", listMembers);
}
