import { execFileSync } from 'node:child_process';
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Provider, { type Configuration } from 'oidc-provider';
import { Agent, fetch } from 'undici';

/**
 * Test fixtures for single sign-on: a self-signed certificate for 127.0.0.1, a real OpenID Connect provider
 * (oidc-provider) served over https with headless login, a stand-in for preset_b's endpoints, and a tiny
 * browser (cookie jar + redirects) that walks the provider's pages the way a person's browser would.
 */

export interface Certificate {
  key: string;
  cert: string;
}

/** A throwaway self-signed certificate for 127.0.0.1, made with the openssl command (argument array). */
export function makeCertificate(): Certificate {
  const dir = mkdtempSync(join(tmpdir(), 'bulwark-sso-cert-'));
  try {
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
      '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-days', '2',
      '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1',
    ], { stdio: 'pipe' });
    return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `https://127.0.0.1:${(server.address() as { port: number }).port}`;
}

async function close(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

// ------------------------------------------------------------------ a real OpenID Connect provider

export interface OidcAccount {
  email?: string;
  email_verified?: boolean;
  preferred_username?: string;
}

export interface OidcTestProvider {
  issuer: string;
  /** Accounts by subject; tests add and change them freely. */
  accounts: Map<string, OidcAccount>;
  /** What the next login interaction does: sign in as this subject, or refuse. */
  nextLogin: { subject: string } | { deny: true };
  /** Token requests the provider received (form fields), to check what the client sent. */
  tokenRequests: URLSearchParams[];
  close(): Promise<void>;
}

export async function startOidcProvider(options: { certificate: Certificate; clientId: string; clientSecret: string; redirectUris: string[] }): Promise<OidcTestProvider> {
  const accounts = new Map<string, OidcAccount>();
  const tokenRequests: URLSearchParams[] = [];
  let provider: Provider | undefined;
  const state: Pick<OidcTestProvider, 'nextLogin'> = { nextLogin: { deny: true } };

  const server = createServer({ key: options.certificate.key, cert: options.certificate.cert }, (request, response) => {
    if (request.url?.startsWith('/interaction/')) {
      interaction(request, response).catch((error: Error) => {
        response.statusCode = 500;
        response.end(error.message);
      });
      return;
    }
    if (request.url === '/token' && request.method === 'POST') recordBody(request, tokenRequests);
    provider!.callback()(request, response);
  });
  const issuer = await listen(server);

  // Headless login: the interaction page signs in (or refuses) whoever the test chose; no HTML involved.
  async function interaction(request: IncomingMessage, response: ServerResponse): Promise<void> {
    await provider!.interactionDetails(request, response);
    const next = state.nextLogin;
    const result = 'deny' in next
      ? { error: 'access_denied', error_description: 'the person declined' }
      : { login: { accountId: next.subject } };
    await provider!.interactionFinished(request, response, result, { mergeWithLastSubmission: false });
  }

  const configuration: Configuration = {
    clients: [
      {
        client_id: options.clientId,
        client_secret: options.clientSecret,
        redirect_uris: options.redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    pkce: { required: () => true },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, interactionRecord) => `/interaction/${interactionRecord.uid}` },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['preferred_username'] },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Session: 600, Grant: 600 },
    // First-party client: consent is implied, so no consent page either.
    async loadExistingGrant(ctx) {
      const grantId = ctx.oidc.result?.consent?.grantId ?? ctx.oidc.session!.grantIdFor(ctx.oidc.client!.clientId);
      if (grantId) return ctx.oidc.provider.Grant.find(grantId);
      const grant = new ctx.oidc.provider.Grant({ clientId: ctx.oidc.client!.clientId, accountId: ctx.oidc.session!.accountId });
      grant.addOIDCScope(String(ctx.oidc.params?.scope ?? 'openid'));
      await grant.save();
      ctx.oidc.session!.grantIdFor(ctx.oidc.client!.clientId, grant.jti);
      return grant;
    },
    async findAccount(_ctx, subject) {
      const account = accounts.get(subject);
      if (!account) return undefined;
      return { accountId: subject, claims: async () => ({ sub: subject, ...account }) };
    },
  };
  provider = new Provider(issuer, configuration);
  return {
    issuer,
    accounts,
    get nextLogin() {
      return state.nextLogin;
    },
    set nextLogin(value) {
      state.nextLogin = value;
    },
    tokenRequests,
    close: () => close(server),
  };
}

/** Copies a form body for inspection without consuming the stream the provider reads. */
function recordBody(request: IncomingMessage, into: URLSearchParams[]): void {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => into.push(new URLSearchParams(Buffer.concat(chunks).toString())));
}

// ------------------------------------------------------------------ preset_b stand-in

export interface PresetBStandIn {
  base: string;
  clientId: string;
  clientSecret: string;
  /** The profile /user answers, and the list /user/emails answers. */
  user: { id: number; login: string; email: string | null };
  emails: { email: string; primary: boolean; verified: boolean }[];
  /** Force failures of the profile endpoints. */
  failUserinfo: boolean;
  tokenRequests: URLSearchParams[];
  close(): Promise<void>;
}

/**
 * A code-hosting provider's OAuth endpoints: authorize (auto-approves, remembers the PKCE challenge), token
 * (checks client secret, code, redirect URI and the S256 verifier; errors answer 200 with `error`, as that
 * provider does), /user (no verified email) and /user/emails (addresses with primary/verified flags).
 */
export async function startPresetB(certificate: Certificate, clientId: string, clientSecret: string): Promise<PresetBStandIn> {
  const codes = new Map<string, { challenge: string; redirectUri: string }>();
  const tokens = new Set<string>();
  const standIn = {
    clientId,
    clientSecret,
    user: { id: 4242, login: 'octo', email: null as string | null },
    emails: [] as { email: string; primary: boolean; verified: boolean }[],
    failUserinfo: false,
    tokenRequests: [] as URLSearchParams[],
  };
  const json = (response: ServerResponse, status: number, body: unknown) => {
    response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
  const server = createServer({ key: certificate.key, cert: certificate.cert }, (request, response) => {
    const url = new URL(request.url ?? '/', 'https://stand-in');
    if (url.pathname === '/login/oauth/authorize') {
      const redirect = new URL(url.searchParams.get('redirect_uri')!);
      if (url.searchParams.get('code_challenge_method') !== 'S256' || !url.searchParams.get('code_challenge')) {
        redirect.searchParams.set('error', 'invalid_request');
      } else {
        const code = randomBytes(16).toString('hex');
        codes.set(code, { challenge: url.searchParams.get('code_challenge')!, redirectUri: url.searchParams.get('redirect_uri')! });
        redirect.searchParams.set('code', code);
      }
      redirect.searchParams.set('state', url.searchParams.get('state') ?? '');
      response.writeHead(302, { location: redirect.href }).end();
      return;
    }
    if (url.pathname === '/login/oauth/access_token' && request.method === 'POST') {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const form = new URLSearchParams(Buffer.concat(chunks).toString());
        standIn.tokenRequests.push(form);
        const code = codes.get(form.get('code') ?? '');
        codes.delete(form.get('code') ?? '');
        const secretOk = form.get('client_id') === clientId && equal(form.get('client_secret') ?? '', clientSecret);
        const verifierOk = !!code && createHash('sha256').update(form.get('code_verifier') ?? '').digest('base64url') === code.challenge;
        if (!secretOk) return json(response, 200, { error: 'incorrect_client_credentials' });
        if (!code || code.redirectUri !== form.get('redirect_uri') || !verifierOk) return json(response, 200, { error: 'bad_verification_code' });
        const token = `gho_${randomBytes(16).toString('hex')}`;
        tokens.add(token);
        json(response, 200, { access_token: token, token_type: 'bearer', scope: 'read:user,user:email' });
      });
      return;
    }
    const bearer = /^Bearer (.+)$/i.exec(request.headers.authorization ?? '')?.[1];
    if (!bearer || !tokens.has(bearer)) return json(response, 401, { message: 'Bad credentials' });
    if (standIn.failUserinfo) return json(response, 500, { message: 'unavailable' });
    if (url.pathname === '/user') return json(response, 200, standIn.user);
    if (url.pathname === '/user/emails') return json(response, 200, standIn.emails);
    json(response, 404, { message: 'Not Found' });
  });
  const base = await listen(server);
  return Object.assign(standIn, { base, close: () => close(server) });
}

function equal(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

// ------------------------------------------------------------------ a browser

/** Follows redirects with a cookie jar, trusting the test certificate, until a URL under `until`. */
export class Browser {
  private readonly jar = new Map<string, string>();
  private readonly dispatcher: Agent;

  constructor(certificate: Certificate) {
    this.dispatcher = new Agent({ connect: { ca: certificate.cert } });
  }

  async follow(start: string, until: string): Promise<URL> {
    let url = start;
    for (let hop = 0; hop < 12; hop++) {
      if (url.startsWith(until)) return new URL(url);
      const cookie = [...this.jar].map(([name, value]) => `${name}=${value}`).join('; ');
      const response = await fetch(url, { redirect: 'manual', dispatcher: this.dispatcher, headers: cookie ? { cookie } : {} });
      for (const line of response.headers.getSetCookie()) {
        const [pair] = line.split(';');
        const index = pair.indexOf('=');
        const name = pair.slice(0, index).trim();
        const value = pair.slice(index + 1).trim();
        if (value === '' || /max-age=0/i.test(line)) this.jar.delete(name);
        else this.jar.set(name, value);
      }
      const body = await response.text();
      const location = response.headers.get('location');
      if (!location) throw new Error(`browser stopped at ${response.status} ${url}: ${body.slice(0, 300)}`);
      url = new URL(location, url).href;
    }
    throw new Error('too many redirects');
  }

  async close(): Promise<void> {
    await this.dispatcher.close();
  }
}
