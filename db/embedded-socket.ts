/**
 * Serves the owner's PGlite database to other local processes (the `quire`
 * CLI) on a Unix socket, speaking the PostgreSQL wire protocol, so they use
 * the same postgres.js driver as with DATABASE_URL.
 *
 * PGlite is a single backend: every client shares one session. That is safe
 * only if nothing runs between the messages of one client's unit of work, so a
 * connection takes PGlite's transaction lock (the one `PGlite.query` and
 * `PGlite.transaction` take for the server's own work) from its first message
 * until the backend reports ReadyForQuery with status idle: a whole
 * Parse..Sync exchange, and a whole BEGIN..COMMIT. The server's own queries and
 * other connections wait meanwhile, and a connection waits while the server is
 * inside a transaction. (`@electric-sql/pglite-socket` 0.2 locks only per
 * message and only against other sockets: a server write made while a CLI
 * transaction was open ran inside that transaction and was rolled back with
 * it; and its peer dependencies pin an older PGlite exactly.)
 *
 * NOTIFY: the backend delivers a notification to whichever client is talking
 * to it when the notifying transaction commits. The LISTENs are the owner's
 * (the access caches), so NotificationResponse messages met in a connection's
 * output are taken out of it and handed to the owner's listeners.
 *
 * The session is shared, so are prepared statement names: clients use unnamed
 * statements (postgres.js `prepare: false`), which live only inside one
 * exchange. (A named statement would outlive its client, and deallocating
 * them when a client leaves would pull them from under the others: postgres.js
 * then retries, and a retried COMMIT in the aborted transaction reports
 * success while the transaction rolled back.)
 *
 * A connection that goes away mid-exchange or inside a transaction is rolled
 * back; one that sits on the lock for IDLE_IN_TRANSACTION_MS without sending
 * anything is closed (like PostgreSQL's idle_in_transaction_session_timeout).
 */
import { rmSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import type { PGlite } from "@electric-sql/pglite";

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const PROTOCOL_3 = 196608;
/** Largest message accepted from a client (PostgreSQL's own limit for most messages is 1 GB; Quire's requests are far smaller). */
const MAX_MESSAGE_BYTES = 256 * 1024 * 1024;
const IDLE_IN_TRANSACTION_MS = 30_000;

const SYNC = Uint8Array.from([0x53, 0, 0, 0, 4]);
function simpleQuery(text: string): Uint8Array {
  const body = Buffer.from(`${text}\0`, "utf8");
  const message = Buffer.alloc(5 + body.length);
  message[0] = 0x51; // 'Q'
  message.writeInt32BE(4 + body.length, 1);
  body.copy(message, 5);
  return message;
}

export interface EmbeddedSocketServer {
  readonly path: string;
  close(): Promise<void>;
}

/** Holds PGlite's transaction lock until the returned function is called. */
function takeSession(client: PGlite): Promise<() => void> {
  return new Promise((resolve, reject) => {
    client._runExclusiveTransaction(() => new Promise<void>((release) => resolve(release))).catch(reject);
  });
}

class Connection {
  private inbound: Buffer = Buffer.alloc(0);
  private outbound: Buffer = Buffer.alloc(0);
  private started = false;
  private closed = false;
  private release: (() => void) | null = null;
  private idleTimer: NodeJS.Timeout | null = null;
  /** Every message of this connection runs after the previous one, in order. */
  chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly client: PGlite,
    private readonly socket: Socket,
    private readonly onNotification: (channel: string, payload: string) => void,
  ) {
    socket.on("data", (data) => this.receive(data));
    socket.on("error", () => this.close());
    socket.on("close", () => this.close());
  }

  private receive(data: Buffer): void {
    if (this.closed) return;
    this.stopIdleTimer();
    this.inbound = this.inbound.length ? Buffer.concat([this.inbound, data]) : data;
    for (;;) {
      if (!this.started) {
        if (this.inbound.length < 8) return;
        const length = this.inbound.readInt32BE(0);
        const code = this.inbound.readInt32BE(4);
        if (length < 8 || length > 10_000) {
          this.fail();
          return;
        }
        if (this.inbound.length < length) return;
        const message = this.inbound.subarray(0, length);
        this.inbound = this.inbound.subarray(length);
        if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
          this.socket.write("N");
        } else if (code === PROTOCOL_3) {
          this.started = true;
          this.enqueue(Uint8Array.from(message));
        } else {
          // CancelRequest (a single backend cannot be interrupted) or an unknown protocol.
          this.fail();
          return;
        }
        continue;
      }
      if (this.inbound.length < 5) return;
      const length = this.inbound.readInt32BE(1);
      if (length < 4 || length > MAX_MESSAGE_BYTES) {
        this.fail();
        return;
      }
      if (this.inbound.length < 1 + length) return;
      const message = Uint8Array.from(this.inbound.subarray(0, 1 + length));
      this.inbound = this.inbound.subarray(1 + length);
      // 'X' Terminate: end the connection here, the backend lives on
      if (message[0] === 0x58) {
        this.fail();
        return;
      }
      this.enqueue(message);
    }
  }

  private enqueue(message: Uint8Array): void {
    this.chain = this.chain.then(() => this.execute(message)).catch(() => this.fail());
  }

  private async execute(message: Uint8Array): Promise<void> {
    if (this.closed) return;
    this.release ??= await takeSession(this.client);
    if (this.closed) return; // close() queued the clean-up, which runs next and releases
    let idle = false;
    const forward: Buffer[] = [];
    const notifications: Array<[string, string]> = [];
    await this.client.runExclusive(() =>
      this.client.execProtocolRawStream(message, {
        onRawData: (data) => {
          idle = this.scanOutput(data, forward, notifications) ?? idle;
        },
      }),
    );
    if (forward.length && this.socket.writable) this.socket.write(Buffer.concat(forward));
    for (const [channel, payload] of notifications) queueMicrotask(() => this.onNotification(channel, payload));
    if (idle) {
      this.release();
      this.release = null;
    } else {
      this.startIdleTimer();
    }
  }

  /**
   * Splits backend output into messages: keeps NotificationResponse ('A') for
   * the owner, forwards the rest, and returns whether the last ReadyForQuery
   * ('Z') reported an idle session (undefined when there was none).
   */
  private scanOutput(data: Uint8Array, forward: Buffer[], notifications: Array<[string, string]>): boolean | undefined {
    this.outbound = this.outbound.length ? Buffer.concat([this.outbound, data]) : Buffer.from(data);
    let idle: boolean | undefined;
    let start = 0;
    let offset = 0;
    while (this.outbound.length - offset >= 5) {
      const type = this.outbound[offset]!;
      const end = offset + 1 + this.outbound.readInt32BE(offset + 1);
      if (end > this.outbound.length) break;
      if (type === 0x41) {
        // NotificationResponse: pid, channel\0, payload\0
        const body = this.outbound.subarray(offset + 9, end);
        const split = body.indexOf(0);
        notifications.push([body.subarray(0, split).toString("utf8"), body.subarray(split + 1, body.length - 1).toString("utf8")]);
        if (offset > start) forward.push(this.outbound.subarray(start, offset));
        start = end;
      } else if (type === 0x5a) {
        idle = this.outbound[offset + 5] === 0x49; // 'I'
      }
      offset = end;
    }
    if (offset > start) forward.push(Buffer.from(this.outbound.subarray(start, offset)));
    this.outbound = Buffer.from(this.outbound.subarray(offset));
    return idle;
  }

  private startIdleTimer(): void {
    this.stopIdleTimer();
    this.idleTimer = setTimeout(() => this.fail(), IDLE_IN_TRANSACTION_MS);
    this.idleTimer.unref();
  }

  private stopIdleTimer(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }

  private fail(): void {
    this.socket.destroy();
    this.close();
  }

  /** Ends the connection; if it was mid-exchange or inside a transaction, the backend is brought back to idle. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.stopIdleTimer();
    this.socket.destroy();
    this.chain = this.chain.catch(() => {}).then(() => this.cleanUp());
  }

  private async cleanUp(): Promise<void> {
    if (!this.started) return;
    const release = this.release ?? (await takeSession(this.client));
    this.release = null;
    try {
      await this.client.runExclusive(async () => {
        const discard = { onRawData: () => {} };
        await this.client.execProtocolRawStream(SYNC, discard);
        if (this.client.isInTransaction()) await this.client.execProtocolRawStream(simpleQuery("ROLLBACK"), discard);
      });
    } finally {
      release();
    }
  }
}

export async function serveEmbeddedSocket(
  client: PGlite,
  socketPath: string,
  onNotification: (channel: string, payload: string) => void,
): Promise<EmbeddedSocketServer> {
  const connections = new Set<Connection>();
  // The caller owns the folder, so a socket file still there was left by an owner that was killed.
  rmSync(socketPath, { force: true });
  const server: Server = createServer((socket) => {
    const connection = new Connection(client, socket, onNotification);
    connections.add(connection);
    socket.once("close", () => void connection.chain.finally(() => connections.delete(connection)));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    path: socketPath,
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const connection of connections) connection.close();
      });
      await Promise.allSettled([...connections].map((c) => c.chain));
      rmSync(socketPath, { force: true });
    },
  };
}
