/**
 * One size cap for everything the appliance downloads. A declared Content-Length is only a claim (it may be
 * absent, as with chunked transfers, or lie), so the bytes are counted as they are read: the first chunk past the
 * cap errors the body stream, which cancels the transfer (the connection is closed), and whatever reads the
 * body — text(), json(), arrayBuffer() or a loop over the stream — fails with DownloadTooLarge instead of
 * holding a partial result.
 */
import { Response } from 'undici';
import { HttpError } from '../core/errors.js';

/** The cap of a download whose caller names none: far above any feed, ruleset or API answer the appliance reads. */
export const DEFAULT_DOWNLOAD_CAP_BYTES = 64 * 1024 * 1024;

/** Statuses whose responses carry no body (a Response cannot be built with one). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

const mebibytes = (bytes: number) => (bytes >= 1024 * 1024 ? `${+(bytes / 1024 / 1024).toFixed(2)} MiB` : `${bytes} bytes`);

/** A download refused for its size: the upstream answered more than the caller accepts (502, nothing kept). */
export class DownloadTooLarge extends HttpError {
  constructor(origin: string, limit: number, declared?: number) {
    super(502, `download from ${origin} refused: ${declared === undefined ? 'more than' : `it declares ${declared} bytes, more than`} the ${mebibytes(limit)} allowed (the transfer was stopped, nothing was kept)`);
  }
}

/**
 * The response with its body counted against `limit` bytes: reading it fails with DownloadTooLarge at the first
 * byte past the limit, or at once when the declared Content-Length is above it (that transfer is stopped before
 * any byte is read). The status and headers stay readable, so a caller that only wants the status (a gateway
 * probe) and cancels the body is not refused.
 */
export async function capDownload(response: Response, limit: number, url: URL | string): Promise<Response> {
  const origin = new URL(url).host;
  if (!response.body || NULL_BODY_STATUSES.has(response.status)) return response;
  const declared = Number(response.headers.get('content-length'));
  let body: ReadableStream<Uint8Array>;
  if (Number.isFinite(declared) && declared > limit) {
    await response.body.cancel().catch(() => undefined);
    const refusal = new DownloadTooLarge(origin, limit, declared);
    // highWaterMark 0: nothing is pulled (and nothing fails) until someone reads.
    body = new ReadableStream<Uint8Array>({ pull: (controller) => controller.error(refusal) }, { highWaterMark: 0 });
  } else {
    let received = 0;
    body = (response.body as unknown as ReadableStream<Uint8Array>).pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          received += chunk.byteLength;
          if (received > limit) controller.error(new DownloadTooLarge(origin, limit));
          else controller.enqueue(chunk);
        },
      }),
    );
  }
  const capped = new Response(body as unknown as ConstructorParameters<typeof Response>[0], { status: response.status, statusText: response.statusText, headers: response.headers });
  Object.defineProperty(capped, 'url', { value: response.url });
  return capped;
}
