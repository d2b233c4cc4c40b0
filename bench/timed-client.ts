/**
 * A client in its own process that times single requests: a latency measured by a client in the server's own
 * process also counts the work the server does after it has answered (a load's read-back), as no real client would.
 * Answers each request message with its status, body and the milliseconds from sending to the last byte read.
 */
export interface TimedRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
}

process.on('message', async (request: TimedRequest) => {
  try {
    const start = performance.now();
    const response = await fetch(request.url, { method: request.method, headers: request.headers, body: request.body });
    const body = await response.text();
    process.send!({ ms: performance.now() - start, status: response.status, body });
  } catch (error) {
    process.send!({ error: (error as Error).message });
  }
});
