import type { Area } from '../area.js';
import type { AppContext } from '../../context.js';
import { ErrorAnswer, SeeOther } from '../../http/documented-responses.js';
import { route, type RouteSpec } from '../../http/route.js';
import { collectionRoutes } from '../../http/collection-routes.js';
import { SsoService } from '../../auth/sso/sso-service.js';
import * as S from './schema.js';

/**
 * Single sign-on (OAuth 2.0 / OpenID Connect): providers, SSO settings, the public sign-in endpoints and the
 * TOTP hand-off. The provider routes come from the declared collection.
 */
export function createSsoArea(context: AppContext): Area {
  return { name: 'sso', routes: routes(context) };
}

function routes(context: AppContext): RouteSpec[] {
  const sso = new SsoService(context);
  const tags = ['auth', 'sso'];
  return [
    ...collectionRoutes(sso.providers, {
      path: '/api/v1/auth/oauth/providers', access: { read: 'settings:read', write: 'settings:write' }, tags, operations: ['list', 'create', 'update', 'delete'],
    }),
    {
      method: 'GET', conditional: 'read', path: '/api/v1/auth/oauth/settings', access: 'settings:write', tags,
      summary: 'SSO settings: public URL, provider network allowances, extra CAs and the two sign-in switches',
      schema: { response: { 200: S.SsoSettingsView } },
      handler: () => sso.settings(),
    },
    route({
      method: 'PUT', path: '/api/v1/auth/oauth/settings', access: 'settings:write', tags,
      summary: 'Change SSO settings (fields not sent are kept)',
      schema: { body: S.SsoSettingsPatch, response: { 200: S.SsoSettingsView } },
      handler: (request) => sso.updateSettings(request.body, request),
    }),
    {
      method: 'GET', path: '/api/v1/auth/oauth/login-options', access: 'public', tags,
      summary: 'Enabled providers for the sign-in page (names and kinds only)',
      schema: { response: { 200: { type: 'array', items: S.LoginOption } } },
      handler: () => sso.loginOptions(),
    },
    route({
      method: 'GET', path: '/api/v1/auth/oauth/{provider}/authorize', access: 'public', tags,
      summary: 'Start a sign-in: mints a state nonce (10 min, single use) and a PKCE S256 verifier; returns the authorization URL',
      schema: { params: S.ProviderParams, response: { 200: S.Authorization } },
      handler: (request, reply) => sso.authorize(request, reply, request.params.provider),
    }),
    route({
      method: 'GET', path: '/api/v1/auth/oauth/{provider}/callback', access: 'public', tags,
      summary: 'Provider redirect target: installs session cookies or hands off to TOTP, then redirects the browser',
      schema: {
        params: S.ProviderParams,
        querystring: S.CallbackQuery,
        response: { 303: SeeOther('To the sign-in page: signed in (session cookies set), a TOTP hand-off ticket, or `oauth_error`') },
      },
      handler: async (request, reply) => {
        const location = await sso.callback(request, reply, request.params.provider);
        // The ticket or error travels in the URL: keep it out of caches and out of Referer headers.
        return reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').redirect(location, 303);
      },
    }),
    route({
      method: 'POST', path: '/api/v1/auth/oauth/totp', access: 'public', tags,
      summary: 'Finish a TOTP-gated single sign-on with the ticket and a TOTP or recovery code; installs the session cookies',
      schema: { body: S.TotpBody, response: { 200: S.CookieSession, 401: ErrorAnswer('An unknown, used or expired ticket, or a wrong code') } },
      handler: (request, reply) => {
        const { ticket, totp_code } = request.body;
        return sso.completeTotp(request, reply, ticket, totp_code);
      },
    }),
  ];
}
