import { Writable } from 'node:stream';
import type { LightMyRequestResponse } from 'fastify';
import { startTestApp, type TestApp } from './app.js';
import type { StartupConfig } from '../../src/config.js';
import { Browser, type Certificate } from './sso.js';

export type Call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown, headers?: Record<string, string>) => Promise<LightMyRequestResponse>;

export interface SsoTestApp extends TestApp {
  /** Every log line the app wrote. */
  logLines: string[];
  /** Every response the tests received (status, headers and body), to check that no secret ever leaves. */
  responses: string[];
  call: Call;
}

/** A test app whose log lines and responses are all kept for the "no secret anywhere" checks. */
export async function startSsoApp(config: Partial<StartupConfig> = {}): Promise<SsoTestApp> {
  const logLines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(String(chunk));
      done();
    },
  });
  const t = await startTestApp({ logger: { level: 'trace', stream }, config });
  const responses: string[] = [];
  const call: Call = async (method, url, payload, headers = {}) => {
    const response = await t.app.inject({ method, url, payload: payload as object | undefined, headers });
    responses.push(`${response.statusCode} ${JSON.stringify(response.headers)} ${response.body}`);
    return response;
  };
  return Object.assign(t, { logLines, responses, call });
}

/** The `name=value` pairs of a response's Set-Cookie headers, and the raw header lines. */
export function setCookies(response: LightMyRequestResponse): { values: Record<string, string>; lines: string[] } {
  const header = response.headers['set-cookie'];
  const lines = header === undefined ? [] : Array.isArray(header) ? header : [String(header)];
  const values: Record<string, string> = {};
  for (const line of lines) {
    const [pair] = line.split(';');
    const index = pair.indexOf('=');
    values[pair.slice(0, index)] = pair.slice(index + 1);
  }
  return { values, lines };
}

export const cookieHeader = (values: Record<string, string>) =>
  Object.entries(values)
    .map(([name, value]) => `${name}=${value}`)
    .join('; ');

export interface SignInStart {
  authorizeUrl: URL;
  state: string;
  /** The browser-binding cookie set by authorize. */
  browserCookie: Record<string, string>;
}

/** The browser's part of a sign-in: ask Bulwark for the URL, walk the provider's pages, hit the callback. */
export class SsoDriver {
  constructor(
    private readonly app: SsoTestApp,
    private readonly certificate: Certificate,
    private readonly publicUrl: string,
  ) {}

  async start(provider: string, headers: Record<string, string> = {}): Promise<SignInStart> {
    const response = await this.app.call('GET', `/api/v1/auth/oauth/${encodeURIComponent(provider)}/authorize`, undefined, headers);
    if (response.statusCode !== 200) throw new Error(`authorize answered ${response.statusCode} ${response.body}`);
    const body = response.json() as { authorize_url: string; state: string };
    return { authorizeUrl: new URL(body.authorize_url), state: body.state, browserCookie: setCookies(response).values };
  }

  /** Walks the provider's pages with a fresh browser until the provider sends it back to Bulwark. */
  async atProvider(start: SignInStart): Promise<URL> {
    const browser = new Browser(this.certificate);
    try {
      return await browser.follow(start.authorizeUrl.href, this.publicUrl);
    } finally {
      await browser.close();
    }
  }

  async callback(redirect: URL, cookies: Record<string, string>): Promise<LightMyRequestResponse> {
    return this.app.call('GET', `${redirect.pathname}${redirect.search}`, undefined, Object.keys(cookies).length ? { cookie: cookieHeader(cookies) } : {});
  }

  /** The whole flow; returns the callback's response. */
  async signIn(provider: string): Promise<LightMyRequestResponse> {
    const start = await this.start(provider);
    return this.callback(await this.atProvider(start), start.browserCookie);
  }
}
