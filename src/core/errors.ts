/** Errors are values with a status; one handler (http/error-handler.ts) turns them into `{"error": ...}`. */
export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export const badRequest = (message: string) => new HttpError(400, message);
export const unauthorized = (message = 'authentication required') => new HttpError(401, message);
export const forbidden = (message = 'permission denied') => new HttpError(403, message);
export const notFound = (message = 'not found') => new HttpError(404, message);
export const conflict = (message: string) => new HttpError(409, message);
export const tooManyRequests = (retryAfterSeconds: number, message = 'too many requests') =>
  new HttpError(429, message, { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) });
/** An upstream the appliance talks to (object storage, a provider) refused or failed: not the client's fault. */
export const badGateway = (message: string) => new HttpError(502, message);
export const unavailable = (message: string) => new HttpError(503, message);

/**
 * Runs a validator that throws, answering its message instead (undefined when it passes): how whole-configuration
 * checks report a section's or object's invariant. An error that is not an HttpError is a validator bug, said so.
 */
export function problemOf(validate: () => void): string | undefined {
  try {
    validate();
    return undefined;
  } catch (error) {
    return error instanceof HttpError ? error.message : `validator failed: ${(error as Error).message}`;
  }
}
