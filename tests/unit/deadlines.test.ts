import { afterEach, describe, expect, it, vi } from "vitest";
import { settledWithin, stopWithin } from "@/server/http/deadlines";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("stopWithin (how `quire serve` stops)", () => {
  it("answers 0 once the stop finished", async () => {
    expect(await stopWithin(1_000, async () => {})).toBe(0);
  });

  it("answers 1, and says why, when the stop failed", async () => {
    const said = vi.spyOn(console, "error").mockImplementation(() => {});
    expect(
      await stopWithin(1_000, async () => {
        throw new Error("database gone");
      }),
    ).toBe(1);
    expect(String(said.mock.calls[0]?.[0])).toContain("stopping failed");
  });

  it("answers 1 at the deadline when a part of the stop never finishes", async () => {
    const said = vi.spyOn(console, "error").mockImplementation(() => {});
    const started = performance.now();
    expect(await stopWithin(50, () => new Promise<void>(() => {}))).toBe(1);
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
    expect(String(said.mock.calls[0]?.[0])).toContain("stopping took over 0.05 s");
  });
});

describe("settledWithin", () => {
  it("waits for work that starts while it waits", async () => {
    const finished: string[] = [];
    let underWay: Array<Promise<void>> = [];
    const finishing = (ms: number, name: string, then: () => Array<Promise<void>>) =>
      new Promise<void>((resolve) =>
        setTimeout(() => {
          finished.push(name);
          underWay = then();
          resolve();
        }, ms),
      );
    underWay = [finishing(10, "first", () => [finishing(10, "started meanwhile", () => [])])];
    await settledWithin(() => underWay, 1_000);
    expect(finished).toEqual(["first", "started meanwhile"]);
  });

  it("does not wait past the deadline", async () => {
    const started = performance.now();
    await settledWithin(() => [new Promise(() => {})], 50);
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});
