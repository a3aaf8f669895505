/** The tool runs under way on a database (what a server's close waits for): a run counts from its start to its end, failed or not. */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { DomainError } from "@/server/core/errors";
import { defineTool, runTool, workUnderWay } from "@/server/actions/tool";

function deferred() {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const gate = { current: deferred() };
const waiting = defineTool({
  name: "waiting",
  description: "Waits for the test's gate.",
  input: z.object({}).describe("Nothing."),
  readOnly: true,
  handle: async () => {
    await gate.current.promise;
    return { done: true };
  },
});

describe("workUnderWay", () => {
  it("holds a run on its context's database while it runs, and not after it ends or fails", async () => {
    const db = {};
    const other = {};
    gate.current = deferred();
    const first = runTool(waiting, { db } as never, {});
    expect(workUnderWay(db).size).toBe(1);
    expect(workUnderWay(other).size).toBe(0);
    gate.current.resolve();
    await expect(first).resolves.toEqual({ done: true });
    expect(workUnderWay(db).size).toBe(0);

    gate.current = deferred();
    const second = runTool(waiting, { db } as never, {});
    expect(workUnderWay(db).size).toBe(1);
    gate.current.reject(new DomainError("NOT_FOUND", "gone"));
    await expect(second).rejects.toMatchObject({ code: "NOT_FOUND" });
    expect(workUnderWay(db).size).toBe(0);
  });
});
