/** Picks the object store the configuration names: an S3-compatible bucket when QUIRE_S3_BUCKET is set, else local disk. */
import path from "node:path";
import type { QuireConfig } from "@/server/config";
import { LocalObjectStore } from "./local";
import type { ObjectStore } from "./object-store";
import { S3ObjectStore } from "./s3";

export function createObjectStore(config: Pick<QuireConfig, "dataDir" | "s3">): ObjectStore {
  if (config.s3) return new S3ObjectStore(config.s3);
  return new LocalObjectStore(path.join(config.dataDir, "uploads"));
}

export type { ObjectStore } from "./object-store";
export { LocalObjectStore } from "./local";
export { S3ObjectStore } from "./s3";
