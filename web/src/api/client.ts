import { clearSession, loadSession, saveSession, type Session } from './session-store';

/**
 * The body field a 400 names, as the API words its messages (src/model/validation.ts): `body.port must be <= 65535`
 * is ['port'], `body.collectors.2 …` ['collectors', '2'], a list body's `body[0].webhooks: …` or `body.0.rate_limit_secs …`
 * ['0', …]. Null when the message names no body field.
 */
export function fieldPathOf(message: string): string[] | null {
  const named = /^body((?:\.[\w-]+|\[\d+\])+)/.exec(message);
  return named ? named[1].split(/[.[\]]/).filter(Boolean) : null;
}

/**
 * The query or path parameter a 400 names (`querystring.q must NOT have more than 256 characters` is 'q',
 * `params.ip: "x" is not an IP address` 'ip'), so a search form can show the message at its field; null otherwise.
 */
export function parameterOf(message: string): string | null {
  return /^(?:querystring|params)\.([\w-]+)/.exec(message)?.[1] ?? null;
}

/** A failed API call: the HTTP status and the API's own `{error}` message, made readable. */
export class ApiError extends Error {
  /** For a 400: the body field the message names (a form shows the message at that field). */
  readonly fieldPath: string[] | null;
  /** For a 400: the query or path parameter the message names. */
  readonly parameter: string | null;

  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
    this.fieldPath = status === 400 ? fieldPathOf(message) : null;
    this.parameter = status === 400 ? parameterOf(message) : null;
  }
}

export interface ApiResult<T> {
  data: T;
  status: number;
  /** X-Total-Count of a list, when the API sent one. */
  total: number | null;
  /** The record's ETag, when the API sent one: pass it back as `ifMatch` to update only what was read. */
  etag: string | null;
}

export type Query = Record<string, string | number | boolean | undefined | null>;

export interface RequestOptions {
  query?: Query;
  body?: unknown;
  /** Sent as If-Match, so a write fails with 412 instead of overwriting someone else's change. */
  ifMatch?: string | null;
  /** A POST that changes no configuration (a ticket): views of pending changes need not refresh. */
  changesNothing?: boolean;
  /** The media type asked for (JSON unless said). */
  accept?: string;
  signal?: AbortSignal;
}

export interface TokenPair {
  access_token: string;
  refresh_token: string;
}

const API_BASE = '/api/v1';
/** Cookie sessions need it on state changes (any value): a cross-site form cannot add a header. */
const CSRF_HEADER = 'x-bulwark-csrf';
/** Calls that are themselves sign-in steps: a 401 there is the answer, not an expired session. */
const NO_REFRESH = /^\/auth\/(login|totp\/login|refresh|register|oauth\/totp)$/;

export function apiUrl(path: string, query?: Query): string {
  const url = new URL(`${API_BASE}${path}`, location.origin);
  for (const [key, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== null && value !== '') url.searchParams.set(key, String(value));
  }
  return url.pathname + url.search;
}

async function errorOf(response: Response): Promise<ApiError> {
  let message = '';
  try {
    const body = (await response.json()) as { error?: unknown };
    if (typeof body.error === 'string') message = body.error;
  } catch {
    // not JSON: fall back to the status line
  }
  if (!message) message = response.statusText || 'request failed';
  if (response.status === 403) message = `Not allowed: ${message}`;
  else if (response.status >= 500) message = `The appliance answered ${response.status}: ${message}`;
  return new ApiError(response.status, message);
}

/**
 * The one way the console talks to the API: the user's own credential on every call, one refresh when the
 * access token has expired, and errors as ApiError carrying the API's message.
 */
export class ApiClient {
  private session: Session | null = loadSession();
  private refreshing: Promise<boolean> | null = null;
  private readonly writeListeners = new Set<() => void>();
  /** Called once when the session can no longer be used (refresh refused): the app shows the sign-in page. */
  onSessionEnded: () => void = () => undefined;

  /** Called after every successful write, so views of pending changes refresh at once. Returns an unsubscribe. */
  onWrite(listener: () => void): () => void {
    this.writeListeners.add(listener);
    return () => this.writeListeners.delete(listener);
  }

  get sessionKind(): Session['kind'] | null {
    return this.session?.kind ?? null;
  }

  useTokens(tokens: TokenPair): void {
    this.session = { kind: 'bearer', accessToken: tokens.access_token, refreshToken: tokens.refresh_token };
    saveSession(this.session);
  }

  /** After single sign-on: the session is in HttpOnly cookies the browser sends by itself. */
  useCookieSession(): void {
    this.session = { kind: 'cookie' };
    saveSession(this.session);
  }

  forget(): void {
    this.session = null;
    clearSession();
  }

  async get<T>(path: string, query?: Query): Promise<T> {
    return (await this.request<T>('GET', path, { query })).data;
  }

  async post<T>(path: string, body?: unknown): Promise<T> {
    return (await this.request<T>('POST', path, { body })).data;
  }

  async put<T>(path: string, body: unknown, ifMatch?: string | null): Promise<T> {
    return (await this.request<T>('PUT', path, { body, ifMatch })).data;
  }

  /**
   * Saves an edit: PUT with the ETag the record was read with as If-Match, where the API checks it (a stale tag
   * then answers 412 and changes nothing); elsewhere the API would refuse the header, so it is left out.
   */
  async update<T>(path: string, body: unknown, etag: string | null): Promise<ApiResult<T>> {
    return this.request<T>('PUT', path, { body, ifMatch: etag });
  }

  async delete(path: string, ifMatch?: string | null): Promise<void> {
    await this.request('DELETE', path, { ifMatch });
  }

  async request<T>(method: string, path: string, options: RequestOptions = {}): Promise<ApiResult<T>> {
    const response = await this.send(method, path, options);
    if (!response.ok) throw await errorOf(response);
    if (method !== 'GET' && !options.changesNothing) for (const listener of this.writeListeners) listener();
    const total = response.headers.get('x-total-count');
    const text = response.status === 204 ? '' : await response.text();
    return {
      data: (text ? JSON.parse(text) : undefined) as T,
      status: response.status,
      total: total === null ? null : Number(total),
      etag: response.headers.get('etag'),
    };
  }

  /**
   * A single-use ticket (30 s) for the dashboard WebSocket or an event stream, passed as `?ticket=`: neither a
   * WebSocket nor EventSource can send the Authorization header.
   */
  async ticket(): Promise<string> {
    return (await this.request<{ ticket: string }>('POST', '/auth/ws-ticket', { changesNothing: true })).data.ticket;
  }

  /** A binary answer (a QR code PNG, an export file) as a Blob. */
  async blob(path: string, query?: Query): Promise<Blob> {
    const response = await this.send('GET', path, { query });
    if (!response.ok) throw await errorOf(response);
    return response.blob();
  }

  /**
   * A POST answered with Server-Sent Events (the diagnostics): each event handed to `onEvent` as it arrives,
   * resolving when the server ends the stream. EventSource cannot POST, so the stream is read from fetch.
   */
  async postStream(path: string, body: unknown, onEvent: (event: string, data: unknown) => void, signal?: AbortSignal): Promise<void> {
    const response = await this.send('POST', path, { body, accept: 'text/event-stream', changesNothing: true, signal });
    if (!response.ok || !response.body) throw await errorOf(response);
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const name = /^event: (.*)$/m.exec(block)?.[1] ?? 'message';
        const data = block.split('\n').filter((line) => line.startsWith('data: ')).map((line) => line.slice(6)).join('\n');
        if (data) onEvent(name, JSON.parse(data));
      }
    }
  }

  /** A POST answered with a file (a packet capture): the Blob and the answer's headers. */
  async postBlob(path: string, body: unknown): Promise<{ blob: Blob; headers: Headers }> {
    const response = await this.send('POST', path, { body, accept: '*/*', changesNothing: true });
    if (!response.ok) throw await errorOf(response);
    return { blob: await response.blob(), headers: response.headers };
  }

  private async send(method: string, path: string, options: RequestOptions): Promise<Response> {
    let response = await fetch(apiUrl(path, options.query), this.init(method, options));
    if (response.status === 401 && this.session && !NO_REFRESH.test(path) && (await this.refresh())) {
      response = await fetch(apiUrl(path, options.query), this.init(method, options));
    }
    return response;
  }

  private init(method: string, options: RequestOptions): RequestInit {
    const headers: Record<string, string> = { accept: options.accept ?? 'application/json' };
    if (method !== 'GET') headers[CSRF_HEADER] = '1';
    if (this.session?.kind === 'bearer') headers.authorization = `Bearer ${this.session.accessToken}`;
    if (options.ifMatch) headers['if-match'] = options.ifMatch;
    let body: string | undefined;
    if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.body);
    }
    return { method, headers, body, credentials: 'same-origin', cache: 'no-store', signal: options.signal };
  }

  /** One refresh at a time, shared by every call that met the expired token. */
  private refresh(): Promise<boolean> {
    this.refreshing ??= this.refreshOnce().finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }

  private async refreshOnce(): Promise<boolean> {
    const session = this.session;
    if (!session) return false;
    const response = await fetch(apiUrl('/auth/refresh'), {
      method: 'POST',
      credentials: 'same-origin',
      headers: session.kind === 'bearer'
        ? { accept: 'application/json', 'content-type': 'application/json', [CSRF_HEADER]: '1' }
        : { accept: 'application/json', [CSRF_HEADER]: '1' },
      body: session.kind === 'bearer' ? JSON.stringify({ refresh_token: session.refreshToken }) : undefined,
    }).catch(() => null);
    if (response?.ok) {
      if (session.kind === 'bearer') this.useTokens((await response.json()) as TokenPair);
      return true;
    }
    this.forget();
    this.onSessionEnded();
    return false;
  }
}
