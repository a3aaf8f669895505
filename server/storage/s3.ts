/**
 * Uploaded files in an S3-compatible bucket (AWS S3, MinIO, R2, Ceph …),
 * selected by QUIRE_S3_BUCKET. A body is first spooled to a temporary file
 * while it is counted and hashed, so an oversized upload is refused before
 * anything reaches the bucket and the PUT carries an exact Content-Length.
 */
import { randomUUID } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand, S3Client, S3ServiceException } from "@aws-sdk/client-s3";
import { assertStorageKey, MeteredStream, type ObjectStore, type PutOptions, type StoredObject } from "./object-store";

export interface S3StoreConfig {
  bucket: string;
  /** e.g. http://minio:9000; absent = AWS S3 for the region. */
  endpoint?: string;
  region: string;
  /** Absent = the SDK's default credential chain (environment, instance role …). */
  accessKeyId?: string;
  secretAccessKey?: string;
  /** Address objects as <endpoint>/<bucket>/<key> (MinIO and most self-hosted stores need this). */
  forcePathStyle: boolean;
}

const isNotFound = (error: unknown) =>
  error instanceof S3ServiceException &&
  (error.name === "NoSuchKey" || error.name === "NotFound" || error.$metadata.httpStatusCode === 404);

export class S3ObjectStore implements ObjectStore {
  readonly kind = "s3";
  private readonly client: S3Client;

  constructor(private readonly config: S3StoreConfig) {
    this.client = new S3Client({
      region: config.region,
      ...(config.endpoint ? { endpoint: config.endpoint } : {}),
      forcePathStyle: config.forcePathStyle,
      ...(config.accessKeyId && config.secretAccessKey
        ? { credentials: { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey } }
        : {}),
      // Plain signed PUTs: many S3-compatible servers reject the SDK's default aws-chunked checksum trailers.
      requestChecksumCalculation: "WHEN_REQUIRED",
      responseChecksumValidation: "WHEN_REQUIRED",
    });
  }

  async put(key: string, body: Readable, options: PutOptions): Promise<StoredObject> {
    assertStorageKey(key);
    const spool = path.join(os.tmpdir(), `quire-upload-${randomUUID()}`);
    const meter = new MeteredStream(options.maxBytes);
    try {
      await pipeline(body, meter, createWriteStream(spool, { flags: "wx", mode: 0o600 }));
      await this.client.send(
        new PutObjectCommand({
          Bucket: this.config.bucket,
          Key: key,
          Body: createReadStream(spool),
          ContentLength: meter.byteSize,
          ContentType: options.contentType,
        }),
      );
    } finally {
      await rm(spool, { force: true });
    }
    return { byteSize: meter.byteSize, sha256: meter.digest() };
  }

  async get(key: string): Promise<{ body: Readable; byteSize: number } | null> {
    assertStorageKey(key);
    try {
      const object = await this.client.send(new GetObjectCommand({ Bucket: this.config.bucket, Key: key }));
      if (!object.Body) return null;
      // On Node the SDK hands over the HTTP response itself, a Readable; the web streams its type also admits are a browser's.
      if (!(object.Body instanceof Readable)) throw new Error("The S3 client returned a body that is not a Node.js stream.");
      return { body: object.Body, byteSize: object.ContentLength ?? 0 };
    } catch (error) {
      if (isNotFound(error)) return null;
      throw error;
    }
  }

  async delete(key: string): Promise<void> {
    assertStorageKey(key);
    await this.client.send(new DeleteObjectCommand({ Bucket: this.config.bucket, Key: key }));
  }
}
