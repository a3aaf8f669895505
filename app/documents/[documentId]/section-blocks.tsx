/**
 * How each content block of a section is shown. Text is markdown rendered by
 * react-markdown without rehype-raw: raw HTML in a document shows as inert
 * text and link URLs pass react-markdown's safe-protocol filter. Images load
 * only from http(s) URLs, inline base64 data, or Quire's own signed download
 * links for stored files (which `read` hands out only to readers who may see them).
 * Content is read block by block first (readable-content.ts): a block that
 * is not one of the server's block shapes, or that fails while rendering, is
 * marked in its place and the others are shown.
 */
import type { ComponentPropsWithoutRef, ReactNode } from "react";
import Markdown, { type Components } from "react-markdown";
import remarkGfm from "remark-gfm";
import type { Block } from "@/server/core/blocks";
import { CsvPreview } from "./csv-preview";
import { markCommentRanges, rehypeCommentMarks } from "./comment-markup";
import { readContent } from "./readable-content";
import { BlockBoundary, UnreadableBlock, UnreadableContent } from "./unreadable";

/**
 * A section's `content`, as sent (untrusted). `downloads` maps storage keys to the reader's signed download URLs (a
 * share-link visitor's are signed for the link); a file added after the page was read has none yet and is named only.
 */
export function SectionBlocks({ content, downloads }: { content: unknown; downloads: Readonly<Record<string, string>> }) {
  const blocks = readContent(content);
  if (blocks === null) return <UnreadableContent />;
  if (blocks.length === 0) return <p className="muted empty-section">This section is empty.</p>;
  return (
    <div className="blocks">
      {blocks.map((read, index) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: blocks have no ids and may repeat; a section re-renders whole
        <BlockBoundary key={index} blockType={read.readable ? read.block.blockType : read.blockType}>
          {read.readable ? <BlockView block={read.block} downloads={downloads} /> : <UnreadableBlock blockType={read.blockType} />}
        </BlockBoundary>
      ))}
    </div>
  );
}

/** Every `read` signs a link for each file it returns: one without is newer than the page. */
const NO_DOWNLOAD = "reload the page to download";

/** A stored file: a download link when the reader has one, else its name. */
function StoredFile({ kind, filename, meta, url }: { kind: string; filename: string; meta: string; url: string | undefined }) {
  return (
    <div className="block-attachment">
      <AttachmentIcon />
      <div>
        {url ? (
          <a href={url} download={filename}>
            {filename}
          </a>
        ) : (
          <span>{filename}</span>
        )}
        <span className="attachment-meta">
          {kind} · {meta}
          {url ? "" : ` · ${NO_DOWNLOAD}`}
        </span>
      </div>
    </div>
  );
}

function BlockView({ block, downloads }: { block: Block; downloads: Readonly<Record<string, string>> }) {
  switch (block.blockType) {
    case "text":
      return <MarkdownText text={block.text} />;
    case "image":
      return <ImageView block={block} downloads={downloads} />;
    case "document":
      return (
        <div className="block-attachment">
          <AttachmentIcon />
          <div>
            {isHttpUrl(block.url) ? (
              <a href={block.url} rel="noopener noreferrer nofollow" target="_blank">
                {block.filename}
              </a>
            ) : (
              <span>{block.filename}</span>
            )}
            <span className="attachment-meta">Document · {block.mediaType}</span>
          </div>
        </div>
      );
    case "file":
      return <StoredFile kind="File" filename={block.filename} meta={block.mediaType} url={downloads[block.key]} />;
    case "csv": {
      const url = downloads[block.key];
      return (
        <div className="block-csv">
          <StoredFile
            kind="CSV"
            filename={block.filename}
            meta={`${block.rowCount} row${block.rowCount === 1 ? "" : "s"} · columns: ${block.headers.join(", ") || "none"}`}
            url={url}
          />
          {url && block.headers.length > 0 ? <CsvPreview url={url} headers={block.headers} /> : null}
        </div>
      );
    }
    case "database_embed":
      return <BlockNotice kind="Database" detail={<code>{block.databaseId}</code>} note="embedded database (shown by id)" />;
  }
}

/** An image block by where its bytes are, with its alt text and caption. */
function ImageView({ block, downloads }: { block: Extract<Block, { blockType: "image" }>; downloads: Readonly<Record<string, string>> }) {
  switch (block.type) {
    case "url":
      return isHttpUrl(block.url) ? (
        <ImageFigure src={block.url} alt={block.alt} caption={block.caption} external />
      ) : (
        <BlockNotice kind="Image" detail="link is not an http(s) URL and is not shown" />
      );
    case "base64": {
      const src = base64ImageSrc(block.mediaType, block.data);
      return src ? (
        <ImageFigure src={src} alt={block.alt} caption={block.caption} />
      ) : (
        <BlockNotice kind="Image" detail="inline image data is not valid" />
      );
    }
    case "storage": {
      const url = downloads[block.key];
      return url ? (
        <ImageFigure src={url} alt={block.alt} caption={block.caption} />
      ) : (
        <BlockNotice kind="Image" detail={block.alt || "stored image"} note={NO_DOWNLOAD} />
      );
    }
    case "file":
      return <BlockNotice kind="Image" detail={<code>{block.path}</code>} note="local file, not uploaded" />;
  }
}

function ImageFigure({ src, alt, caption, external }: { src: string; alt?: string; caption?: string; external?: boolean }) {
  return (
    <figure className="block-image">
      <img src={src} alt={alt ?? ""} loading="lazy" {...(external ? { referrerPolicy: "no-referrer" as const } : {})} />
      {caption ? <figcaption>{caption}</figcaption> : null}
    </figure>
  );
}

export const markdownComponents: Components = {
  // The section name is the H2; headings inside its text sit below it.
  h1: (props) => <h3 {...withoutNode(props)} />,
  h2: (props) => <h4 {...withoutNode(props)} />,
  h3: (props) => <h5 {...withoutNode(props)} />,
  h4: (props) => <h6 {...withoutNode(props)} />,
  h5: (props) => <h6 {...withoutNode(props)} />,
  a: (props) => {
    const { href, children, ...rest } = withoutNode(props);
    // react-markdown blanks unsafe URLs (javascript: and the like): keep the text, drop the link.
    if (!href) return <span className="unsafe-link">{children}</span>;
    const external = typeof href === "string" && /^https?:\/\//i.test(href);
    return (
      <a href={href} {...rest} {...(external ? { rel: "noopener noreferrer nofollow", target: "_blank" } : {})}>
        {children}
      </a>
    );
  },
  img: (props) => {
    const { src, alt, ...rest } = withoutNode(props);
    if (typeof src !== "string" || !isHttpUrl(src)) return <span className="muted">[image: {alt || "not shown"}]</span>;
    return <img src={src} alt={alt ?? ""} {...rest} loading="lazy" referrerPolicy="no-referrer" />;
  },
};

function MarkdownText({ text }: { text: string }) {
  return (
    <div className="markdown">
      <Markdown components={markdownComponents} remarkPlugins={[remarkGfm]} rehypePlugins={[rehypeCommentMarks]}>
        {markCommentRanges(text)}
      </Markdown>
    </div>
  );
}

function withoutNode<T extends { node?: unknown }>(props: T): Omit<T, "node"> {
  const { node: _node, ...rest } = props;
  return rest;
}

function BlockNotice({ kind, detail, note }: { kind: string; detail: ReactNode; note?: string }) {
  return (
    <div className="block-notice">
      <span className="block-kind">{kind}</span>
      <span className="block-detail">{detail}</span>
      {note ? <span className="block-note">{note}</span> : null}
    </div>
  );
}

function AttachmentIcon(props: ComponentPropsWithoutRef<"svg">) {
  return (
    <svg viewBox="0 0 16 16" width="16" height="16" aria-hidden="true" {...props}>
      <path d="M4 1.75h5.5L12.25 4.5v9.75H4z" fill="none" stroke="currentColor" strokeWidth="1.2" strokeLinejoin="round" />
      <path d="M9.25 1.75v3h3" fill="none" stroke="currentColor" strokeWidth="1.2" />
    </svg>
  );
}

export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}

const IMAGE_MEDIA_TYPE = /^image\/[a-z0-9][a-z0-9!#$&^_.+-]*$/i;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

function base64ImageSrc(mediaType: string, data: string): string | null {
  if (!IMAGE_MEDIA_TYPE.test(mediaType) || data.length === 0 || !BASE64.test(data)) return null;
  return `data:${mediaType.toLowerCase()};base64,${data}`;
}
