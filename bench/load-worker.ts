import { parentPort, workerData } from 'node:worker_threads';
import { Pool } from 'undici';

/**
 * Load generator for throughput figures, run in a worker thread so the client's own cost does not share the
 * server's event loop. Keeps `connections` keep-alive connections busy for `durationMs` and reports the
 * completed requests per second; any answer other than `status` is an error.
 */
export interface LoadRequest {
  origin: string;
  path: string;
  headers: Record<string, string>;
  connections: number;
  durationMs: number;
  status: number;
}

const job = workerData as LoadRequest;
const pool = new Pool(job.origin, { connections: job.connections, pipelining: 1 });
let completed = 0;
let failure: string | undefined;
const start = performance.now();
const end = start + job.durationMs;
await Promise.all(
  Array.from({ length: job.connections }, async () => {
    while (performance.now() < end && failure === undefined) {
      const response = await pool.request({ path: job.path, method: 'GET', headers: job.headers });
      await response.body.arrayBuffer();
      if (response.statusCode !== job.status) failure = `${job.path}: ${response.statusCode}`;
      completed++;
    }
  }),
);
const seconds = (performance.now() - start) / 1000;
await pool.close();
parentPort!.postMessage(failure ? { error: failure } : { perSecond: completed / seconds });
