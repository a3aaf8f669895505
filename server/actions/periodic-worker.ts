/**
 * A background round (email digests, webhook deliveries) run every `tickMs` and on demand, one round at a time: a
 * round asked for while another runs waits for it. `stop` ends the ticks, waits for the round under way, then calls
 * `onStop` (closing what the rounds used).
 */
export interface PeriodicWorker<T> {
  runOnce(): Promise<T>;
  stop(): Promise<void>;
}

export function periodicWorker<T>(label: string, tickMs: number, round: () => Promise<T>, onStop: () => void): PeriodicWorker<T> {
  let running: Promise<unknown> = Promise.resolve();
  const timer = setInterval(() => {
    running = running.then(round).catch((error: unknown) => console.error(`[quire] ${label} round failed`, error));
  }, tickMs);
  timer.unref();
  return {
    runOnce: () => {
      const next = running.then(round);
      running = next.catch(() => undefined);
      return next;
    },
    async stop() {
      clearInterval(timer);
      await running;
      onStop();
    },
  };
}
