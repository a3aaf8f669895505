/**
 * The reused encoder (server/collab/encode.ts) writes exactly what lib0's
 * `encoding.encode` writes: random runs of lib0's writes, one after another
 * through the same scratch, messages that outgrow it (and shrink it back),
 * a call made while another writes, and a writer that throws.
 */
import * as encoding from "lib0/encoding";
import * as prng from "lib0/prng";
import { describe, expect, it } from "vitest";
import { encode } from "@/server/collab/encode";

type Writer = (encoder: encoding.Encoder) => void;

/** A random message: varuints, strings (long and non-ASCII ones too), byte arrays of up to `maxBytes`. */
function randomWriter(gen: prng.PRNG, maxBytes: number): Writer {
  const steps: Writer[] = [];
  const count = prng.uint32(gen, 0, 12);
  for (let i = 0; i < count; i++) {
    switch (prng.uint32(gen, 0, 4)) {
      case 0: {
        const value = prng.uint32(gen, 0, 2 ** 31);
        steps.push((e) => encoding.writeVarUint(e, value));
        break;
      }
      case 1: {
        const text = prng.utf16String(gen, prng.uint32(gen, 0, 600));
        steps.push((e) => encoding.writeVarString(e, text));
        break;
      }
      case 2: {
        const bytes = prng.uint8Array(gen, prng.uint32(gen, 0, maxBytes));
        steps.push((e) => encoding.writeVarUint8Array(e, bytes));
        break;
      }
      case 3: {
        const bytes = prng.uint8Array(gen, prng.uint32(gen, 0, 300));
        steps.push((e) => encoding.writeUint8Array(e, bytes));
        break;
      }
      default: {
        const value = prng.uint32(gen, 0, 255);
        steps.push((e) => encoding.write(e, value));
      }
    }
  }
  return (encoder) => {
    for (const step of steps) step(encoder);
  };
}

/** Whether the reused encoder writes what lib0 writes (compared as Buffers: these reach 400 KB). */
const sameAsPlain = (write: Writer) => Buffer.from(encode(write)).equals(Buffer.from(encoding.encode(write)));

describe("the reused encoder", () => {
  it("writes what encoding.encode writes, message after message", () => {
    const gen = prng.create(2811);
    for (let i = 0; i < 2_000; i++) {
      const write = randomWriter(gen, 2_000);
      expect(sameAsPlain(write)).toBe(true);
    }
  });

  it("writes what encoding.encode writes for messages larger than its scratch, and afterwards", () => {
    const gen = prng.create(17);
    for (let i = 0; i < 20; i++) {
      // Up to 400 KB: past the 16 KB scratch and past what it keeps (256 KB).
      const write = randomWriter(gen, 400_000);
      expect(sameAsPlain(write)).toBe(true);
      expect(sameAsPlain(randomWriter(gen, 200))).toBe(true);
    }
  });

  it("hands out bytes that the next message does not overwrite", () => {
    const first = encode((e) => encoding.writeVarString(e, "first message"));
    const copy = Array.from(first);
    encode((e) => encoding.writeVarString(e, "the second one, written over the same scratch"));
    expect(Array.from(first)).toEqual(copy);
  });

  it("answers a call made while another writes, and both messages are whole", () => {
    let inner: Uint8Array | null = null;
    const outer = encode((e) => {
      encoding.writeVarString(e, "outer before");
      inner = encode((nested) => encoding.writeVarString(nested, "inner"));
      encoding.writeVarUint8Array(e, inner);
      encoding.writeVarString(e, "outer after");
    });
    const innerPlain = encoding.encode((e) => encoding.writeVarString(e, "inner"));
    expect(Array.from(inner!)).toEqual(Array.from(innerPlain));
    const outerPlain = encoding.encode((e) => {
      encoding.writeVarString(e, "outer before");
      encoding.writeVarUint8Array(e, innerPlain);
      encoding.writeVarString(e, "outer after");
    });
    expect(Array.from(outer)).toEqual(Array.from(outerPlain));
  });

  it("starts clean after a writer that threw", () => {
    expect(() =>
      encode((e) => {
        encoding.writeVarString(e, "half a message");
        throw new Error("the writer failed");
      }),
    ).toThrow("the writer failed");
    expect(Array.from(encode((e) => encoding.writeVarUint(e, 42)))).toEqual([42]);
  });
});
