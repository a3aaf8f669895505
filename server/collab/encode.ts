/**
 * lib0's `encoding.encode` for the messages this process writes on every
 * keystroke (sync and awareness messages to clients, stamped presence, bus
 * frames), without its two allocations per message.
 *
 * lib0 gives every encoder a fresh 100-byte `Uint8Array` and copies the
 * result into another one. A typed array over 64 bytes gets its own backing
 * store outside V8's heap, and on the 2-core boxes of bench/README.md each
 * such allocation costs 1-2 µs, about as much as applying a keystroke to a
 * doc ("Scale-out", 2026-11-30 12:00). Here one encoder is reused, and what
 * it wrote is copied into Node's pooled Buffer space (`Buffer.from`, which
 * takes a slice of a shared 8 KB slab for anything under 4 KB).
 *
 * The bytes are lib0's own: the same encoder functions write them.
 * `tests/unit/collab-encode.test.ts` holds them to `encoding.encode` on random
 * writes, nested calls and messages larger than the scratch space. A call
 * made while another is writing (a writer that encodes) takes the plain path.
 */
import * as encoding from "lib0/encoding";

/** What the scratch encoder starts with, and is brought back to after a message that grew it past `SCRATCH_KEPT_BYTES`. */
const SCRATCH_BYTES = 16 * 1024;
/** A scratch grown by a large message (a sync step 2 of a long section) is kept up to this size, so one such message does not pin megabytes. */
const SCRATCH_KEPT_BYTES = 256 * 1024;

const scratch = encoding.createEncoder();
scratch.cbuf = new Uint8Array(SCRATCH_BYTES);
let writing = false;

/** The bytes `write` puts into an encoder: exactly what `encoding.encode(write)` returns. */
export function encode(write: (encoder: encoding.Encoder) => void): Uint8Array {
  if (writing) return encoding.encode(write);
  writing = true;
  try {
    write(scratch);
    // Grown past the scratch (a large message): lib0 joins the parts into a fresh array, as `encoding.encode` does.
    if (scratch.bufs.length > 0) return encoding.toUint8Array(scratch);
    // Copied out of the scratch, which the next message overwrites; a plain Uint8Array over the pooled bytes, as lib0 returns.
    const pooled = Buffer.from(scratch.cbuf.subarray(0, scratch.cpos));
    return new Uint8Array(pooled.buffer, pooled.byteOffset, pooled.byteLength);
  } finally {
    scratch.cpos = 0;
    scratch.bufs = [];
    if (scratch.cbuf.length > SCRATCH_KEPT_BYTES) scratch.cbuf = new Uint8Array(SCRATCH_BYTES);
    writing = false;
  }
}
