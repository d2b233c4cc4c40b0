/**
 * Reading `table inet bulwark` back in a worker thread. With 10,000 rules the listing is 4 MB of text; parsed on the
 * server's thread after every load and every drift check, it left megabytes of garbage on the server's heap, and a
 * later request paid for them in collections (6–10 ms each with the heap such a ruleset builds). The worker runs
 * `nft` and the parse and sends back the canonical state only. Should the worker fail to start or die, the read
 * runs on this thread as before; the worker is started again at the next read.
 */
import { Worker } from 'node:worker_threads';
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ReadBackResult } from '../packet-filter.js';
import { readBackTable } from './nft-listing.js';

// The worker's own file: `.ts` when the server runs from source (tests), `.js` once compiled.
const WORKER_FILE = new URL(`./nft-read-back.worker${extname(fileURLToPath(import.meta.url))}`, import.meta.url);

/** A worker does not inherit the TypeScript loader the process runs under from source: it registers it first. */
function newWorker(): Worker {
  if (!WORKER_FILE.pathname.endsWith('.ts')) return new Worker(WORKER_FILE);
  const loader = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  return new Worker(`import(${loader}).then(({ register }) => { register(); return import(${JSON.stringify(WORKER_FILE.href)}); });`, { eval: true });
}

export class NftReadBack {
  private worker: Worker | undefined;
  private nextId = 0;
  private readonly waiting = new Map<number, (result: ReadBackResult | undefined) => void>();
  /** Reads the worker answered (the rest ran on this thread). */
  answered = 0;

  constructor(private readonly nft: string) {}

  async read(): Promise<ReadBackResult> {
    return (await this.inWorker()) ?? readBackTable(this.nft);
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  /** The worker's answer; undefined when it could not give one. */
  private inWorker(): Promise<ReadBackResult | undefined> {
    const worker = this.started();
    if (!worker) return Promise.resolve(undefined);
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      // Only while a read is under way does the worker keep the process alive.
      worker.ref();
      worker.postMessage({ id, nft: this.nft });
    });
  }

  private started(): Worker | undefined {
    if (this.worker) return this.worker;
    let worker: Worker;
    try {
      worker = newWorker();
    } catch {
      return undefined;
    }
    worker.unref();
    worker.on('message', ({ id, result }: { id: number; result: ReadBackResult }) => {
      this.answered++;
      this.answer(id, result);
    });
    const gone = () => {
      if (this.worker === worker) this.worker = undefined;
      for (const id of [...this.waiting.keys()]) this.answer(id, undefined);
    };
    worker.on('error', gone);
    worker.on('exit', gone);
    this.worker = worker;
    return worker;
  }

  private answer(id: number, result: ReadBackResult | undefined): void {
    const resolve = this.waiting.get(id);
    this.waiting.delete(id);
    if (this.waiting.size === 0) this.worker?.unref();
    resolve?.(result);
  }
}
