import { Pool } from 'undici';

/**
 * Load generator for throughput figures, run as a child process so neither its event loop nor its CPU time is
 * counted as the server's. Keeps `connections` keep-alive connections busy for `durationMs` and reports the
 * completed requests; any answer other than `status` is an error.
 */
export interface LoadRequest {
  origin: string;
  path: string;
  headers: Record<string, string>;
  connections: number;
  durationMs: number;
  status: number;
  /** PEM of the CA that signed an https origin's certificate. */
  ca?: string;
  /** Close each connection after its answer, so every request makes a new connection (a TLS handshake over https). */
  newConnectionEach?: boolean;
}

process.once('message', async (job: LoadRequest) => {
  const pool = new Pool(job.origin, { connections: job.connections, pipelining: 1, ...(job.ca ? { connect: { ca: job.ca } } : {}) });
  let completed = 0;
  let failure: string | undefined;
  const start = performance.now();
  const end = start + job.durationMs;
  await Promise.all(
    Array.from({ length: job.connections }, async () => {
      while (performance.now() < end && failure === undefined) {
        try {
          const response = await pool.request({ path: job.path, method: 'GET', headers: job.headers, reset: job.newConnectionEach === true });
          await response.body.arrayBuffer();
          if (response.statusCode !== job.status) failure = `${job.path}: ${response.statusCode}`;
          completed++;
        } catch (error) {
          failure = `${job.path}: ${(error as Error).message}`;
        }
      }
    }),
  );
  const seconds = (performance.now() - start) / 1000;
  await pool.close();
  process.send!(failure ? { error: failure } : { completed, seconds }, () => process.exit(0));
});
