/**
 * A description people write in markdown (a merge request's, a changeset's), rendered as the document's text is:
 * GitHub-flavoured markdown, raw HTML skipped (never rendered, never shown as markup), link and image URLs through
 * the same safe-protocol rules as a section's text.
 */
import Markdown from "react-markdown";
import remarkGfm from "remark-gfm";
import { markdownComponents } from "@/app/documents/[documentId]/section-blocks";

export function MarkdownDescription({ text, className }: { text: string; className?: string }) {
  return (
    <div className={className ? `markdown ${className}` : "markdown"}>
      <Markdown components={markdownComponents} remarkPlugins={[remarkGfm]} skipHtml>
        {text}
      </Markdown>
    </div>
  );
}
