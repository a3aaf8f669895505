/** Picks the object store the configuration names: an S3-compatible bucket when QUIRE_S3_BUCKET is set, else local disk. */
import path from "node:path";
import { LocalObjectStore } from "./local";
import type { ObjectStore } from "./object-store";
import { S3ObjectStore, type S3StoreConfig } from "./s3";

/** Where uploaded files go (server/config.ts reads it from the environment; this module takes it as given). */
export interface ObjectStoreSettings {
  dataDir: string;
  /** Present: the bucket; absent: local disk under dataDir/uploads. */
  s3: S3StoreConfig | undefined;
}

export function createObjectStore(config: ObjectStoreSettings): ObjectStore {
  if (config.s3) return new S3ObjectStore(config.s3);
  return new LocalObjectStore(path.join(config.dataDir, "uploads"));
}

export type { ObjectStore } from "./object-store";
export { LocalObjectStore } from "./local";
export { S3ObjectStore } from "./s3";
