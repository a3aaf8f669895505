/**
 * The environment, read and validated in this one module, with the defaults
 * `npm start` relies on: no other module reads or writes `process.env`. The
 * one write is `exportNextEnvironment`, for the two libraries that take
 * their settings only from the environment.
 */
import path from "node:path";
import { z } from "zod";
import { DEFAULT_OUTBOUND_SETTINGS, OUTBOUND_OPENINGS, type OutboundSettings } from "@/server/outbound/addresses";
import { DEFAULT_MAX_UPLOAD_BYTES } from "@/server/storage/links";
import type { S3StoreConfig } from "@/server/storage/s3";

const flag = z
  .enum(["true", "false", "1", "0", "yes", "no", ""])
  .optional()
  .transform((v) => v === "true" || v === "1" || v === "yes");
const optionalText = z
  .string()
  .optional()
  .transform((v) => (v ? v : undefined));

const httpUrl = z
  .string()
  .url()
  .refine((url) => /^https?:\/\//i.test(url), "must be an http:// or https:// URL");

const envSchema = z.object({
  DATABASE_URL: z.string().url().optional(),
  QUIRE_DATA_DIR: z.string().min(1).default(".quire"),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default("0.0.0.0"),
  /** Public base URL, used in links Quire hands out (share links, upload URLs). */
  QUIRE_PUBLIC_URL: httpUrl.optional(),
  NEXTAUTH_SECRET: z.string().min(16).optional(),
  /** Public URL of the site for sign-in redirects; default QUIRE_PUBLIC_URL, else the server's own URL. */
  NEXTAUTH_URL: httpUrl.optional(),
  /** Defaults for `quire mcp-proxy --url/--token`. */
  QUIRE_URL: optionalText,
  QUIRE_TOKEN: optionalText,
  /** Largest file `upload_url` accepts, in bytes (default 25 MB). */
  QUIRE_MAX_UPLOAD_BYTES: z.coerce.number().int().min(1).default(DEFAULT_MAX_UPLOAD_BYTES),
  /** Set to store uploads in an S3-compatible bucket instead of <QUIRE_DATA_DIR>/uploads. */
  QUIRE_S3_BUCKET: optionalText,
  QUIRE_S3_ENDPOINT: optionalText.pipe(z.string().url().optional()),
  QUIRE_S3_REGION: optionalText,
  QUIRE_S3_ACCESS_KEY_ID: optionalText,
  QUIRE_S3_SECRET_ACCESS_KEY: optionalText,
  QUIRE_S3_FORCE_PATH_STYLE: flag,
  /**
   * Behind a reverse proxy: believe its X-Forwarded-For (client address for
   * rate limits) and X-Forwarded-Host. Off by default, as any client can send
   * those headers. (X-Forwarded-Proto is never believed: https is learnt from
   * QUIRE_PUBLIC_URL.)
   */
  QUIRE_TRUST_PROXY: flag,
  /** redis:// URL shared by several Quire processes: live rooms exchange updates and awareness through it. */
  QUIRE_REDIS_URL: optionalText.pipe(
    z
      .string()
      .regex(/^rediss?:\/\//, "must be a redis:// or rediss:// URL")
      .optional(),
  ),
  /** smtp:// or smtps:// URL: email notifications go out through this mail server; unset = no email. */
  QUIRE_SMTP_URL: optionalText.pipe(
    z
      .string()
      .regex(/^smtps?:\/\//, "must be an smtp:// or smtps:// URL")
      .optional(),
  ),
  /** The From address of notification emails. */
  QUIRE_EMAIL_FROM: z.string().min(3).default("Quire <quire@localhost>"),
  /** At most one notification email per person per this many seconds (a digest of what arrived). */
  QUIRE_EMAIL_BATCH_SECONDS: z.coerce.number().int().min(1).max(86_400).default(300),
  /**
   * Address kinds outbound requests (webhooks, OAuth client metadata) may
   * reach besides public ones, comma-separated: `loopback`, `private`.
   * Default: none. Link-local and other special ranges are never reached.
   */
  QUIRE_OUTBOUND_ALLOW_PRIVATE: optionalText.pipe(
    z
      .string()
      .optional()
      .transform((v) => (v ? v.split(",").map((part) => part.trim()) : []))
      .pipe(z.array(z.enum(OUTBOUND_OPENINGS))),
  ),
  /** Outbound requests may use plain http:// (development only; default https only). */
  QUIRE_OUTBOUND_ALLOW_HTTP: flag,
  /**
   * Web pages (origins, comma-separated, or `*`) whose scripts may call /api/mcp and the OAuth endpoints: browser-based
   * MCP clients. Unset: none (MCP clients outside a browser send no Origin and need nothing here).
   */
  QUIRE_MCP_ALLOWED_ORIGINS: optionalText.pipe(
    z
      .string()
      .optional()
      .transform((list, ctx) => {
        const origins = (list ?? "")
          .split(",")
          .map((entry) => entry.trim().replace(/\/$/, "").toLowerCase())
          .filter(Boolean);
        for (const origin of origins) {
          if (origin !== "*" && (!URL.canParse(origin) || new URL(origin).origin !== origin)) {
            ctx.addIssue({ code: "custom", message: `${JSON.stringify(origin)} is not an origin (scheme://host[:port]) or *` });
          }
        }
        return origins;
      }),
  ),
});

export interface QuireConfig {
  databaseUrl: string | undefined;
  dataDir: string;
  port: number;
  host: string;
  publicUrl: string | undefined;
  authSecret: string | undefined;
  /** Where sign-in redirects point (NEXTAUTH_URL, else QUIRE_PUBLIC_URL); undefined: the server's own URL. */
  siteUrl: string | undefined;
  /** `quire mcp-proxy` defaults (QUIRE_URL, QUIRE_TOKEN). */
  proxy: { url: string | undefined; token: string | undefined };
  maxUploadBytes: number;
  /** Trust X-Forwarded-For/-Host/-Proto (QUIRE_TRUST_PROXY). */
  trustProxy: boolean;
  /** Present when uploads go to an S3-compatible bucket; absent = local disk under dataDir/uploads. */
  s3: S3StoreConfig | undefined;
  /** Redis for live rooms shared across processes (QUIRE_REDIS_URL); absent = this process's rooms work alone. */
  redisUrl: string | undefined;
  /** Origins whose pages may call /api/mcp and the OAuth endpoints (QUIRE_MCP_ALLOWED_ORIGINS); empty = none. */
  mcpAllowedOrigins: string[];
  /** Email notifications (QUIRE_SMTP_URL, QUIRE_EMAIL_FROM, QUIRE_EMAIL_BATCH_SECONDS); absent = no email. */
  email: { smtpUrl: string; from: string; batchSeconds: number } | undefined;
  /** What outbound requests may reach (QUIRE_OUTBOUND_ALLOW_PRIVATE, QUIRE_OUTBOUND_ALLOW_HTTP). */
  outbound: OutboundSettings;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): QuireConfig {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ");
    throw new Error(`Invalid environment: ${problems}`);
  }
  const e = parsed.data;
  return {
    databaseUrl: e.DATABASE_URL,
    dataDir: path.resolve(e.QUIRE_DATA_DIR),
    port: e.PORT,
    host: e.HOST,
    publicUrl: e.QUIRE_PUBLIC_URL,
    authSecret: e.NEXTAUTH_SECRET,
    siteUrl: e.NEXTAUTH_URL ?? e.QUIRE_PUBLIC_URL,
    proxy: { url: e.QUIRE_URL, token: e.QUIRE_TOKEN },
    maxUploadBytes: e.QUIRE_MAX_UPLOAD_BYTES,
    trustProxy: e.QUIRE_TRUST_PROXY,
    redisUrl: e.QUIRE_REDIS_URL,
    outbound: {
      ...DEFAULT_OUTBOUND_SETTINGS,
      allowHttp: e.QUIRE_OUTBOUND_ALLOW_HTTP,
      allow: e.QUIRE_OUTBOUND_ALLOW_PRIVATE,
    },
    mcpAllowedOrigins: e.QUIRE_MCP_ALLOWED_ORIGINS,
    email: e.QUIRE_SMTP_URL
      ? { smtpUrl: e.QUIRE_SMTP_URL, from: e.QUIRE_EMAIL_FROM, batchSeconds: e.QUIRE_EMAIL_BATCH_SECONDS }
      : undefined,
    s3: e.QUIRE_S3_BUCKET
      ? {
          bucket: e.QUIRE_S3_BUCKET,
          endpoint: e.QUIRE_S3_ENDPOINT,
          region: e.QUIRE_S3_REGION ?? "us-east-1",
          accessKeyId: e.QUIRE_S3_ACCESS_KEY_ID,
          secretAccessKey: e.QUIRE_S3_SECRET_ACCESS_KEY,
          forcePathStyle: e.QUIRE_S3_FORCE_PATH_STYLE,
        }
      : undefined,
  };
}

/**
 * The base of every link Quire hands out (uploads, downloads, invites, share
 * links, the MCP configuration), worked out in one place: QUIRE_PUBLIC_URL
 * when set, else the origin the request came to, else the server's own URL.
 * Without a trailing slash.
 */
export function publicBaseUrl(sources: { configured: string | undefined; requestOrigin?: string | undefined; ownUrl: string }): string {
  return (sources.configured ?? sources.requestOrigin ?? sources.ownUrl).replace(/\/+$/, "");
}

/**
 * The one write to the environment: next-auth v4 takes its site URL and
 * whether to believe forwarded host headers only from NEXTAUTH_URL and
 * AUTH_TRUST_HOST, and Next.js its telemetry switch only from
 * NEXT_TELEMETRY_DISABLED. (next-auth's secret is passed in, see
 * app/_lib/next-auth-options.ts.)
 */
export function exportNextEnvironment(settings: { siteUrl: string; trustProxy: boolean }): void {
  process.env.NEXTAUTH_URL = settings.siteUrl;
  if (settings.trustProxy) process.env.AUTH_TRUST_HOST = "true";
  else delete process.env.AUTH_TRUST_HOST;
  process.env.NEXT_TELEMETRY_DISABLED = "1";
}
