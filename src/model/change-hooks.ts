import { AsyncLocalStorage } from 'node:async_hooks';
import type { ChangeHook, ModelChange } from './declarations.js';

/**
 * Change hooks per kind (pending flags, re-rendering, re-applying a daemon). A change fires each hook registered
 * for any of its kinds once, the hooks one after another. Code running inside `settle` (every HTTP write) waits
 * for the hooks its own writes fired, so a client that reads right after its write sees their effect, and a
 * hook's failure is its request's failure; elsewhere a hook's failure is logged.
 */
export class ChangeHooks {
  private readonly hooks: { kinds: ReadonlySet<string>; hook: ChangeHook }[] = [];
  private readonly waiting = new AsyncLocalStorage<Promise<void>[]>();

  constructor(private readonly onUnobservedError: (error: unknown) => void) {}

  on(kinds: readonly string[], hook: ChangeHook): () => void {
    const entry = { kinds: new Set(kinds), hook };
    this.hooks.push(entry);
    return () => {
      const index = this.hooks.indexOf(entry);
      if (index >= 0) this.hooks.splice(index, 1);
    };
  }

  fire(change: ModelChange): void {
    const matching = this.hooks.filter(({ kinds }) => [...change.kinds].some((kind) => kinds.has(kind)));
    if (matching.length === 0) return;
    const run = (async () => {
      for (const { hook } of matching) await hook(change);
    })();
    const waiting = this.waiting.getStore();
    if (waiting) waiting.push(run);
    else run.catch(this.onUnobservedError);
  }

  /** Runs fn, then waits for every hook fired by its writes (and by those hooks' own writes); a hook's failure is fn's. */
  async settle<T>(fn: () => T | Promise<T>): Promise<T> {
    const runs: Promise<void>[] = [];
    let result: T;
    try {
      result = await this.waiting.run(runs, fn);
    } catch (error) {
      // fn's own error answers; hooks its earlier writes fired must not become unhandled rejections.
      for (const run of runs) run.catch(this.onUnobservedError);
      throw error;
    }
    let failure: PromiseRejectedResult | undefined;
    for (let awaited = 0; awaited < runs.length; ) {
      const batch = runs.slice(awaited);
      awaited = runs.length;
      failure ??= (await Promise.allSettled(batch)).find((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
    }
    if (failure) throw failure.reason;
    return result;
  }
}
