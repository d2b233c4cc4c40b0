/** A run of work that waits for the store's writes to pause (see whenQuiet). */
export interface QuietWork {
  /** Stops it (before the database closes); anyone waiting on `settled` is let go. */
  stop(): void;
  /** Resolves once no run is pending: at once when idle, else after the pending run (tests await this instead of sleeping). */
  settled(): Promise<void>;
}

/**
 * Work done ahead of a request that will want it, once the store's writes have paused for `quietMs`: a burst of
 * writes (a reorder touches every rule) is followed by one run, after it ends. The work is only a head start: the
 * request does it itself when it comes first, and reports what fails there, so a failure here is dropped.
 */
export function whenQuiet(store: { onChange(listener: () => void): () => void }, quietMs: number, work: () => void): QuietWork {
  let lastChange = 0;
  let timer: NodeJS.Timeout | undefined;
  let waiting: (() => void)[] = [];
  const letGo = () => {
    const waiters = waiting;
    waiting = [];
    for (const resolve of waiters) resolve();
  };
  // The timer keeps the process alive only while someone awaits `settled`.
  const schedule = (ms: number) => {
    timer = setTimeout(fire, ms);
    if (waiting.length === 0) timer.unref();
  };
  const fire = () => {
    const quiet = performance.now() - lastChange;
    if (quiet < quietMs) {
      schedule(quietMs - quiet);
      return;
    }
    timer = undefined;
    try {
      work();
    } catch {
      // the request reports it
    }
    letGo();
  };
  const unsubscribe = store.onChange(() => {
    lastChange = performance.now();
    if (timer === undefined) schedule(quietMs);
  });
  return {
    stop: () => {
      clearTimeout(timer);
      timer = undefined;
      unsubscribe();
      letGo();
    },
    settled: () => {
      if (timer === undefined) return Promise.resolve();
      timer.ref();
      return new Promise<void>((resolve) => waiting.push(resolve));
    },
  };
}
