/** Uploaded files in a folder on local disk (default: <QUIRE_DATA_DIR>/uploads). */
import { randomUUID } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, rename, rm, stat } from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import { DomainError } from "@/server/core/errors";
import { pipeline } from "node:stream/promises";
import { assertStorageKey, MeteredStream, type ObjectStore, type PutOptions, type StoredObject } from "./object-store";

const isMissing = (error: unknown) => (error as NodeJS.ErrnoException | null)?.code === "ENOENT";

export class LocalObjectStore implements ObjectStore {
  readonly kind = "local";
  readonly root: string;

  constructor(root: string) {
    this.root = path.resolve(root);
  }

  /** The file of a key: validated, and checked once more to lie inside the root. */
  private fileOf(key: string): string {
    assertStorageKey(key);
    const file = path.resolve(this.root, key);
    if (!file.startsWith(this.root + path.sep)) {
      throw new DomainError("VALIDATION_FAILED", `${JSON.stringify(key)} is not a storage key.`, {
        issues: [{ path: "key", message: "outside the store" }],
      });
    }
    return file;
  }

  async put(key: string, body: Readable, options: PutOptions): Promise<StoredObject> {
    const file = this.fileOf(key);
    await mkdir(path.dirname(file), { recursive: true });
    // Written beside the target and renamed into place, so a failed or oversized
    // upload never leaves a partial file under the key.
    const partial = `${file}.part-${randomUUID()}`;
    const meter = new MeteredStream(options.maxBytes);
    try {
      await pipeline(body, meter, createWriteStream(partial, { flags: "wx" }));
      await rename(partial, file);
    } catch (error) {
      await rm(partial, { force: true });
      throw error;
    }
    return { byteSize: meter.byteSize, sha256: meter.digest() };
  }

  async get(key: string): Promise<{ body: Readable; byteSize: number } | null> {
    const file = this.fileOf(key);
    try {
      const info = await stat(file);
      if (!info.isFile()) return null;
      return { body: createReadStream(file), byteSize: info.size };
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.fileOf(key), { force: true });
  }
}
