/** Environment read once, validated, with the defaults `npm start` relies on. */
import path from "node:path";
import { z } from "zod";

const envSchema = z.object({
  DATABASE_URL: z.string().url().optional(),
  QUIRE_DATA_DIR: z.string().min(1).default(".quire"),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default("0.0.0.0"),
  /** Public base URL, used in links Quire hands out (share links, upload URLs). */
  QUIRE_PUBLIC_URL: z.string().url().optional(),
  NEXTAUTH_SECRET: z.string().min(16).optional(),
});

export interface QuireConfig {
  databaseUrl: string | undefined;
  dataDir: string;
  port: number;
  host: string;
  publicUrl: string | undefined;
  authSecret: string | undefined;
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
  };
}
