/**
 * Content blocks: the one schema for every block variant of the spec's block
 * table (spec §2.2). Objects are strict so a misspelt field is reported, not
 * silently dropped.
 */
import { z } from "zod";
import { MAX_REQUEST_DESCRIPTION } from "./limits";
import { patternSaidInWords } from "./schema-listing";

export const MAX_BLOCKS_PER_SECTION = 2_000;
/** 1 MB of ASCII text; with the rest of a call it stays inside MAX_REQUEST_BYTES (4 MiB). */
export const MAX_TEXT_BLOCK_CHARS = 1_000_000;
/** About 2.2 MB of binary image data, so one such block fits in a call; larger images belong in storage via `upload_url`. */
export const MAX_BASE64_CHARS = 3_000_000;

// Said once for every variant: tools/list shows the variants as one object (server/mcp/lean-schema.ts).
const BLOCK_TYPE = "The kind of block.";
const SOURCE_TYPE = "Where the bytes are.";

const mediaType = patternSaidInWords(
  z
    .string()
    .max(255)
    .regex(/^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/i, "must be a media type such as image/png")
    .describe("Media type, e.g. image/png."),
);

const imageMediaType = mediaType.refine((t) => t.toLowerCase().startsWith("image/"), "must be an image/* media type");

const httpUrl = z
  .string()
  .max(8_192)
  .url()
  // zod runs refinements even after .url() failed, so the URL may not parse here.
  .refine((u) => URL.canParse(u) && /^https?:$/i.test(new URL(u).protocol), "must be an http:// or https:// URL")
  .describe("http(s) URL (never fetched).");

const storageKey = z.string().min(1).max(512).describe("Key from `upload_url`.");

const filename = z.string().min(1).max(255).describe("File name shown to readers.");

/** What an image says in words: read aloud in its place and shown when it cannot load. */
const imageAlt = z.string().max(2_000).optional().describe("Alt text.");
/** Shown under the image to every reader. */
const imageCaption = z.string().max(2_000).optional().describe("Caption shown under the image.");

const textBlock = z.strictObject({
  blockType: z.literal("text").describe(BLOCK_TYPE),
  text: z
    .string()
    .max(MAX_TEXT_BLOCK_CHARS)
    .describe(
      `Markdown (a call is at most ${MAX_REQUEST_DESCRIPTION}). Keep <svc:comment id> tags intact; comment with <svc:comment-new body="…" mentions="<userId>">text</svc:comment-new>.`,
    ),
});

const imageBlock = z.discriminatedUnion("type", [
  z.strictObject({
    blockType: z.literal("image").describe(BLOCK_TYPE),
    type: z.literal("url").describe(SOURCE_TYPE),
    mediaType: imageMediaType,
    url: httpUrl,
    alt: imageAlt,
    caption: imageCaption,
  }),
  z.strictObject({
    blockType: z.literal("image").describe(BLOCK_TYPE),
    type: z.literal("base64").describe(SOURCE_TYPE),
    mediaType: imageMediaType,
    data: patternSaidInWords(
      z
        .string()
        .min(1)
        .max(MAX_BASE64_CHARS)
        .regex(/^[A-Za-z0-9+/]*={0,2}$/, "must be standard base64 without line breaks")
        .describe("Base64 bytes; larger images: `upload_url` and a storage block."),
    ),
    alt: imageAlt,
    caption: imageCaption,
  }),
  z.strictObject({
    blockType: z.literal("image").describe(BLOCK_TYPE),
    type: z.literal("storage").describe(SOURCE_TYPE),
    mediaType: imageMediaType,
    key: storageKey,
    alt: imageAlt,
    caption: imageCaption,
  }),
  z.strictObject({
    blockType: z.literal("image").describe(BLOCK_TYPE),
    type: z.literal("file").describe(SOURCE_TYPE),
    path: z.string().min(1).max(4_096).describe("Local path (stdio proxy only)."),
  }),
]);

const documentBlock = z.strictObject({
  blockType: z.literal("document").describe(BLOCK_TYPE),
  type: z.literal("url").describe(SOURCE_TYPE),
  mediaType,
  url: httpUrl,
  filename,
});

const csvBlock = z.strictObject({
  blockType: z.literal("csv").describe(BLOCK_TYPE),
  type: z.literal("storage").describe(SOURCE_TYPE),
  mediaType,
  key: storageKey,
  filename,
  headers: z.array(z.string().max(1_000)).max(1_000).describe("Column headers of the CSV file."),
  rowCount: z.number().int().min(0).describe("Number of data rows."),
});

const fileBlock = z.strictObject({
  blockType: z.literal("file").describe(BLOCK_TYPE),
  type: z.literal("storage").describe(SOURCE_TYPE),
  mediaType,
  key: storageKey,
  filename,
});

const databaseEmbedBlock = z.strictObject({
  blockType: z.literal("database_embed").describe(BLOCK_TYPE),
  databaseId: z.string().uuid().describe("The database to embed."),
});

export const blockSchema = z
  .discriminatedUnion("blockType", [textBlock, imageBlock, documentBlock, csvBlock, fileBlock, databaseEmbedBlock])
  .describe(
    "By blockType: text (text); image: type url (url), base64 (data), storage (key) or file (path); document: url; csv, file: storage (key); database_embed (databaseId).",
  );

export const contentSchema = z.array(blockSchema).max(MAX_BLOCKS_PER_SECTION).describe("Content blocks, in order.");

/**
 * Read-only: blocks live in section versions, which are shared and cached
 * (frozen at runtime, see frozen.ts). Only the top level is read-only in the
 * type, so blocks read from a document can be passed back as tool input (a
 * CSV block's `headers` is typed as zod's input array).
 */
export type Block = Readonly<z.infer<typeof blockSchema>>;

/** Storage keys a piece of content refers to (for upload checks and signed download links). */
export function storageKeysOf(content: readonly Block[]): string[] {
  return content.flatMap((b) => ("type" in b && b.type === "storage" ? [b.key] : []));
}

/** Index of the first block the server itself cannot accept (a local file only the stdio proxy can upload). */
export function firstLocalFileBlock(content: readonly Block[]): number {
  return content.findIndex((b) => b.blockType === "image" && b.type === "file");
}
