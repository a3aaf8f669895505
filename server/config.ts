/** Environment read once, validated, with the defaults `npm start` relies on. */
import path from "node:path";
import { z } from "zod";
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

const envSchema = z.object({
  DATABASE_URL: z.string().url().optional(),
  QUIRE_DATA_DIR: z.string().min(1).default(".quire"),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default("0.0.0.0"),
  /** Public base URL, used in links Quire hands out (share links, upload URLs). */
  QUIRE_PUBLIC_URL: z.string().url().optional(),
  NEXTAUTH_SECRET: z.string().min(16).optional(),
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
   * rate limits), X-Forwarded-Host and X-Forwarded-Proto. Off by default, as
   * any client can send those headers.
   */
  QUIRE_TRUST_PROXY: flag,
});

export interface QuireConfig {
  databaseUrl: string | undefined;
  dataDir: string;
  port: number;
  host: string;
  publicUrl: string | undefined;
  authSecret: string | undefined;
  maxUploadBytes: number;
  /** Trust X-Forwarded-For/-Host/-Proto (QUIRE_TRUST_PROXY). */
  trustProxy: boolean;
  /** Present when uploads go to an S3-compatible bucket; absent = local disk under dataDir/uploads. */
  s3: S3StoreConfig | undefined;
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
    maxUploadBytes: e.QUIRE_MAX_UPLOAD_BYTES,
    trustProxy: e.QUIRE_TRUST_PROXY,
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
