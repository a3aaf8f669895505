/**
 * A server's close waits for the requests it is still handling: a page render
 * or a read goes on after its socket is closed, and the database its caller
 * closes next must not be pulled from under it (CI logs showed reads failing
 * with CONNECTION_ENDED at test servers' shutdown).
 */
import postgres from "postgres";
import { afterEach, expect, it, vi } from "vitest";
import { createTestDatabase, testDatabaseUrl } from "../helpers/database";
import { startTestServer } from "../helpers/server";

afterEach(() => {
  vi.restoreAllMocks();
});

// The lock that holds the read needs a second connection to the server (PostgreSQL, not the embedded PGlite).
it.skipIf(!testDatabaseUrl())(
  "finishes a request still waiting on the database before it stops, and the request meets an open database",
  async () => {
    const database = await createTestDatabase();
    const server = await startTestServer({ database });
    const owner = await server.createUser();
    const { documentId } = (await server.callTool("documents", owner.userId, { action: "create", path: "closing" })) as {
      documentId: string;
    };
    const errors = vi.spyOn(console, "error");
    // The read waits on a lock the test holds, so it is still being handled when the close begins.
    const blocker = postgres(database.url!, { max: 1, onnotice: () => {} });
    await blocker.unsafe("begin");
    await blocker.unsafe("lock table documents in access exclusive mode");
    const read = server
      .trpcClient(owner.token)
      .read.query({ documentId })
      .catch((error: unknown) => error);
    await vi.waitFor(
      async () => {
        const [waiting] = await blocker<Array<{ count: number }>>`
          select count(*)::int as count from pg_stat_activity
          where datname = current_database() and pid <> pg_backend_pid() and wait_event_type = 'Lock'`;
        expect(waiting!.count).toBeGreaterThan(0);
      },
      { timeout: 10_000, interval: 50 },
    );
    let closed = false;
    const closing = server.close().then(() => {
      closed = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(closed).toBe(false);
    await blocker.unsafe("rollback");
    await blocker.end();
    await closing;
    await database.close();
    // The client's connection was closed under it; on the server the read ran to its end against an open database.
    expect(await read).toBeInstanceOf(Error);
    const logged = errors.mock.calls.flat().map(String).join("\n");
    expect(logged).not.toMatch(/CONNECTION_ENDED|failed/);
  },
);
