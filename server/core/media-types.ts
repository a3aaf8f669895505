/**
 * The media types Quire accepts for uploads, with the file extension each is
 * stored under. One table serves the `upload_url` allow list, the storage key
 * extension, how a download is presented (inline or attachment) and the stdio
 * proxy's guess of a local file's type.
 *
 * SVG (image/svg+xml) is deliberately absent: an SVG document can carry
 * script, so serving user-supplied SVG from Quire's own origin is a stored-XSS
 * vector. Convert diagrams to PNG or WebP before uploading.
 */

export interface MediaTypeInfo {
  /** Lower-case essence, e.g. "image/png". */
  mediaType: string;
  /** Extension the storage key gets, with the dot. */
  extension: string;
  /** Other extensions a local file of this type may have (for the stdio proxy's guess). */
  aliases?: readonly string[];
  /** Shown inline by browsers (images, PDF); everything else downloads as an attachment. */
  inline: boolean;
}

export const UPLOAD_MEDIA_TYPES: readonly MediaTypeInfo[] = [
  { mediaType: "image/png", extension: ".png", inline: true },
  { mediaType: "image/jpeg", extension: ".jpg", aliases: [".jpeg", ".jpe"], inline: true },
  { mediaType: "image/gif", extension: ".gif", inline: true },
  { mediaType: "image/webp", extension: ".webp", inline: true },
  { mediaType: "application/pdf", extension: ".pdf", inline: true },
  { mediaType: "text/csv", extension: ".csv", inline: false },
  { mediaType: "text/plain", extension: ".txt", aliases: [".text", ".log"], inline: false },
  { mediaType: "text/markdown", extension: ".md", aliases: [".markdown"], inline: false },
  { mediaType: "application/vnd.openxmlformats-officedocument.wordprocessingml.document", extension: ".docx", inline: false },
  { mediaType: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", extension: ".xlsx", inline: false },
  { mediaType: "application/vnd.openxmlformats-officedocument.presentationml.presentation", extension: ".pptx", inline: false },
  { mediaType: "application/vnd.oasis.opendocument.text", extension: ".odt", inline: false },
  { mediaType: "application/vnd.oasis.opendocument.spreadsheet", extension: ".ods", inline: false },
  { mediaType: "application/vnd.oasis.opendocument.presentation", extension: ".odp", inline: false },
  { mediaType: "application/msword", extension: ".doc", inline: false },
  { mediaType: "application/vnd.ms-excel", extension: ".xls", inline: false },
  { mediaType: "application/vnd.ms-powerpoint", extension: ".ppt", inline: false },
  { mediaType: "application/zip", extension: ".zip", inline: false },
  { mediaType: "application/gzip", extension: ".gz", aliases: [".tgz"], inline: false },
  { mediaType: "application/x-tar", extension: ".tar", inline: false },
  { mediaType: "application/x-7z-compressed", extension: ".7z", inline: false },
];

const byType = new Map(UPLOAD_MEDIA_TYPES.map((info) => [info.mediaType, info]));
const byExtension = new Map(
  UPLOAD_MEDIA_TYPES.flatMap((info) => [info.extension, ...(info.aliases ?? [])].map((ext) => [ext, info] as const)),
);

/** The essence of a Content-Type value: type/subtype, lower-cased, parameters dropped. */
export function mediaTypeEssence(value: string): string {
  return (value.split(";", 1)[0] ?? "").trim().toLowerCase();
}

/** The allow-list entry for a media type (parameters and case ignored), or undefined when Quire refuses it. */
export function uploadMediaType(value: string): MediaTypeInfo | undefined {
  return byType.get(mediaTypeEssence(value));
}

/** The allowed media type a file name's extension suggests, or undefined. */
export function mediaTypeForFilename(filename: string): MediaTypeInfo | undefined {
  const dot = filename.lastIndexOf(".");
  if (dot < 1) return undefined;
  return byExtension.get(filename.slice(dot).toLowerCase());
}

/** Whether a download of this type is shown inline (images, PDF) rather than saved as an attachment. */
export function isInlineMediaType(value: string): boolean {
  return uploadMediaType(value)?.inline ?? false;
}
