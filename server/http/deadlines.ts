/**
 * Waiting with a deadline, for a process that stops: what is still under way
 * is waited for, but never past the deadline.
 */

/** Resolves once `underWay()` is empty (what starts meanwhile is waited for too), or after `deadlineMs`. */
export async function settledWithin(underWay: () => Array<Promise<unknown>>, deadlineMs: number): Promise<void> {
  const giveUpAt = performance.now() + deadlineMs;
  for (let pending = underWay(); pending.length > 0; pending = underWay()) {
    const left = giveUpAt - performance.now();
    if (left <= 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled(pending), new Promise((resolve) => (timer = setTimeout(resolve, left)))]);
    clearTimeout(timer);
  }
}

/**
 * Runs a graceful stop and answers the process's exit code: 0 once it
 * finished, 1 when it failed or outlasted `deadlineMs` (said on stderr; the
 * parts still under way are abandoned with the process).
 */
export async function stopWithin(deadlineMs: number, work: () => Promise<void>): Promise<number> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<number>((resolve) => {
    timer = setTimeout(() => {
      console.error(`[quire] stopping took over ${deadlineMs / 1000} s: exiting without waiting further`);
      resolve(1);
    }, deadlineMs);
  });
  const finished = work().then(
    () => 0,
    (error: unknown) => {
      console.error("[quire] stopping failed", error);
      return 1;
    },
  );
  try {
    return await Promise.race([finished, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
