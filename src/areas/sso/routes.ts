import type { Area } from '../area.js';
import type { RouteSpec } from '../../http/route.js';
import { SsoService, type SsoSettingsView } from '../../auth/sso/sso-service.js';
import * as S from './schema.js';

/**
 * Single sign-on (OAuth 2.0 / OpenID Connect): providers, SSO settings, the public sign-in endpoints and the
 * TOTP hand-off. The provider routes come from the declared collection.
 */
export const ssoArea: Area = {
  name: 'sso',
  routes(context): RouteSpec[] {
    const sso = new SsoService(context);
    const tags = ['auth', 'sso'];
    const providerName = (request: { params: unknown }) => (request.params as { provider: string }).provider;
    return [
      ...sso.providers.routes(),
      {
        method: 'GET', conditional: 'read', path: '/api/v1/auth/oauth/settings', access: 'settings:write', tags,
        summary: 'SSO settings: public URL, provider network allowances, extra CAs and the two sign-in switches',
        schema: { response: { 200: S.SsoSettingsView } },
        handler: () => sso.settings(),
      },
      {
        method: 'PUT', path: '/api/v1/auth/oauth/settings', access: 'settings:write', tags,
        summary: 'Change SSO settings (fields not sent are kept)',
        schema: { body: S.SsoSettingsPatch, response: { 200: S.SsoSettingsView } },
        handler: (request) => sso.updateSettings(request.body as Partial<SsoSettingsView>, request),
      },
      {
        method: 'GET', path: '/api/v1/auth/oauth/login-options', access: 'public', tags,
        summary: 'Enabled providers for the sign-in page (names and kinds only)',
        schema: { response: { 200: { type: 'array', items: S.LoginOption } } },
        handler: () => sso.loginOptions(),
      },
      {
        method: 'GET', path: '/api/v1/auth/oauth/{provider}/authorize', access: 'public', tags,
        summary: 'Start a sign-in: mints a state nonce (10 min, single use) and a PKCE S256 verifier; returns the authorization URL',
        schema: { params: S.ProviderParams, response: { 200: S.Authorization } },
        handler: (request, reply) => sso.authorize(request, reply, providerName(request)),
      },
      {
        method: 'GET', path: '/api/v1/auth/oauth/{provider}/callback', access: 'public', tags,
        summary: 'Provider redirect target: installs session cookies or hands off to TOTP, then redirects the browser',
        schema: { params: S.ProviderParams, querystring: S.CallbackQuery },
        handler: async (request, reply) => {
          const location = await sso.callback(request, reply, providerName(request));
          // The ticket or error travels in the URL: keep it out of caches and out of Referer headers.
          return reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').redirect(location, 303);
        },
      },
      {
        method: 'POST', path: '/api/v1/auth/oauth/totp', access: 'public', tags,
        summary: 'Finish a TOTP-gated single sign-on with the ticket and a TOTP or recovery code; installs the session cookies',
        schema: { body: S.TotpBody, response: { 200: S.CookieSession } },
        handler: (request, reply) => {
          const { ticket, totp_code } = request.body as { ticket: string; totp_code: string };
          return sso.completeTotp(request, reply, ticket, totp_code);
        },
      },
    ];
  },
};
