/**
 * Work done ahead of a request that will want it, once the store's writes have paused for `quietMs`: a burst of
 * writes (a reorder touches every rule) is followed by one run, after it ends. The work is only a head start: the
 * request does it itself when it comes first, and reports what fails there, so a failure here is dropped.
 * Returns the function that stops it (before the database closes).
 */
export function whenQuiet(store: { onChange(listener: () => void): () => void }, quietMs: number, work: () => void): () => void {
  let lastChange = 0;
  let timer: NodeJS.Timeout | undefined;
  const fire = () => {
    const quiet = performance.now() - lastChange;
    if (quiet < quietMs) {
      timer = setTimeout(fire, quietMs - quiet).unref();
      return;
    }
    timer = undefined;
    try {
      work();
    } catch {
      // the request reports it
    }
  };
  const unsubscribe = store.onChange(() => {
    lastChange = performance.now();
    timer ??= setTimeout(fire, quietMs).unref();
  });
  return () => {
    clearTimeout(timer);
    unsubscribe();
  };
}
