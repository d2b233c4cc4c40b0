import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Area } from '../area.js';
import type { AppContext } from '../../context.js';
import { route, type RouteSpec } from '../../http/route.js';
import { IdParams } from '../../model/schema-helpers.js';
import { ErrorAnswer, NoContent } from '../../http/documented-responses.js';
import { singletonRoutes } from '../../http/singleton-routes.js';
import { PERMISSIONS, PERMISSION_DESCRIPTIONS } from '../../core/permissions.js';
import { actorOf, type VersionCheck } from '../../auth/identity-service.js';
import { requirePreconditions, setEntityTag, strongTagOfValue } from '../../http/conditional.js';
import { assertCsrfHeader, clearSessionCookies, cookiesSecure, readCookie, REFRESH_COOKIE, setSessionCookies } from '../../auth/cookies.js';
import { badRequest } from '../../core/errors.js';
import * as S from './schema.js';

/** Role ids are names (built-in `admin`, custom `auditor`), not UUIDs. */
const RoleIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

/**
 * Accounts and roles live outside the configuration store, so the generic conditional writes do not cover them:
 * the service runs this check on the version it is about to change, in the step that changes it.
 */
const ifMatchOf = (request: FastifyRequest): VersionCheck => (version) => requirePreconditions(request, strongTagOfValue(version));

/** An account or role as answered, with the entity tag of its version set on the reply. */
function taggedVersion<T>(reply: FastifyReply, { record, version }: { record: T; version: unknown }): T {
  setEntityTag(reply, strongTagOfValue(version));
  return record;
}

const TooMany = ErrorAnswer('Too many failed attempts: wait for Retry-After seconds');
/** What a sign-in or token exchange answers when refused. */
const SIGN_IN_REFUSALS = { 401: ErrorAnswer('Wrong credentials, or an unknown, used or expired challenge or token'), 429: TooMany };

export function createAuthArea(context: AppContext): Area {
  return { name: 'auth', routes: routes(context) };
}

function routes(context: AppContext): RouteSpec[] {
  const identity = context.identity;
  const tags = ['auth'];
  const settingsRoutes = singletonRoutes(identity.settingsSection, {
    path: '/api/v1/auth/settings', access: { read: 'settings:read', write: 'settings:write' }, tags,
    write: (patch, request) => identity.updateSettings(patch, actorOf(request)),
  });
  return [
    route({
      method: 'POST', path: '/api/v1/auth/register', access: 'public', tags,
      summary: 'Create the first admin account (first boot only; 403 once any account exists)',
      schema: { body: S.RegisterBody, response: { 201: S.User, 403: ErrorAnswer('An account already exists: registration is closed') } },
      handler: async (request, reply) => reply.status(201).send(await identity.accounts.register(request.body, actorOf(request))),
    }),
    {
      method: 'GET', path: '/api/v1/auth/register', access: 'public', tags,
      summary: 'Whether first-boot registration is open (no account exists yet); the sign-in page asks',
      schema: { response: { 200: S.RegistrationState } },
      handler: () => ({ registration_open: identity.registrationOpen() }),
    },
    route({
      method: 'POST', path: '/api/v1/auth/login', access: 'public', tags,
      summary: 'Log in; returns tokens, or a TOTP challenge when TOTP is enabled',
      schema: { body: S.Credentials, response: { 200: S.LoginResponse, ...SIGN_IN_REFUSALS, 403: ErrorAnswer('The appliance requires TOTP and this account has none enrolled') } },
      handler: (request) => {
        const { username, password } = request.body;
        return identity.signIn.login(username, password, request.ip);
      },
    }),
    route({
      method: 'POST', path: '/api/v1/auth/totp/login', access: 'public', tags,
      summary: 'Finish a TOTP login with the challenge and a TOTP or recovery code',
      schema: { body: S.TotpLoginBody, response: { 200: S.TokenPair, ...SIGN_IN_REFUSALS } },
      handler: (request) => {
        const { challenge, code } = request.body;
        return identity.signIn.completeTotpLogin(challenge, code, request.ip);
      },
    }),
    route({
      method: 'POST', path: '/api/v1/auth/refresh', access: 'public', tags,
      summary: 'Exchange a refresh token (body, or the browser session cookie) for a new token pair; the refresh token rotates',
      schema: { body: S.RefreshBody, response: { 200: S.RefreshResponse, ...SIGN_IN_REFUSALS, 403: ErrorAnswer('A cookie refresh without the CSRF header') } },
      handler: async (request, reply) => {
        const fromBody = request.body?.refresh_token;
        if (fromBody) return identity.signIn.refresh(fromBody, request.ip);
        // A browser session refreshes from its cookie and gets rotated cookies, never the tokens in the body.
        const fromCookie = readCookie(request, REFRESH_COOKIE);
        if (!fromCookie) throw badRequest('body.refresh_token is required (or the refresh cookie of a browser session)');
        assertCsrfHeader(request);
        const pair = await identity.signIn.refresh(fromCookie, request.ip);
        setSessionCookies(reply, pair, context.clock.now(), cookiesSecure(request, identity.publicUrl()));
        const { access_token: _access, refresh_token: _refresh, ...lifetimes } = pair;
        return lifetimes;
      },
    }),
    route({
      method: 'POST', path: '/api/v1/auth/logout', access: 'authenticated', tags,
      summary: 'Revoke the current session (its refresh token stops working at once) and clear the session cookies',
      schema: { body: S.LogoutBody, response: { 204: NoContent('Signed out: the session is revoked and its cookies cleared') } },
      handler: (request, reply) => {
        const fromBody = request.body?.refresh_token;
        if (fromBody) identity.signIn.logout(actorOf(request), fromBody, 'body');
        else identity.signIn.logout(actorOf(request), readCookie(request, REFRESH_COOKIE), 'cookie');
        clearSessionCookies(reply, cookiesSecure(request, identity.publicUrl()));
        return reply.status(204).send();
      },
    }),
    {
      method: 'GET', path: '/api/v1/auth/me', access: 'authenticated', tags,
      summary: 'The current identity, role and permission names',
      schema: { response: { 200: S.Me } },
      handler: (request) => identity.accounts.me(actorOf(request)),
    },
    {
      method: 'POST', path: '/api/v1/auth/ws-ticket', access: 'authenticated', tags,
      summary: 'Issue a single-use 30-second ticket for the WebSocket or an SSE stream (Bearer JWT sessions only)',
      schema: { response: { 200: S.Ticket } },
      handler: (request) => identity.issueTicket(actorOf(request)),
    },
    {
      method: 'POST', path: '/api/v1/auth/totp/setup', access: 'authenticated', tags,
      summary: 'Begin TOTP enrolment: otpauth URI and QR code',
      schema: { response: { 200: S.TotpSetup } },
      handler: (request) => identity.secondFactor.totpSetup(actorOf(request)),
    },
    route({
      method: 'POST', path: '/api/v1/auth/totp/verify', access: 'authenticated', tags,
      summary: 'Activate TOTP with a valid 6-digit code; returns ten single-use recovery codes',
      schema: { body: S.TotpVerifyBody, response: { 200: S.TotpVerified, 429: TooMany } },
      handler: (request) => identity.secondFactor.totpVerify(actorOf(request), request.body.code),
    }),
    route({
      method: 'POST', path: '/api/v1/auth/totp/disable', access: 'authenticated', tags,
      summary: 'Disable TOTP; needs the current password',
      schema: { body: S.TotpDisableBody, response: { 200: Type.Object({ totp_enabled: Type.Boolean() }), 429: TooMany } },
      handler: (request) => identity.secondFactor.totpDisable(actorOf(request), request.body.password),
    }),
    {
      method: 'GET', path: '/api/v1/auth/users', access: 'users:read', tags, summary: 'List accounts',
      schema: { response: { 200: { type: 'array', items: S.User } } },
      handler: (_request, reply) => {
        const users = identity.accounts.listUsers();
        reply.header('x-total-count', String(users.length));
        return users;
      },
    },
    route({
      method: 'POST', path: '/api/v1/auth/users', access: 'users:write', tags, summary: 'Create an account',
      schema: { body: S.CreateUserBody, response: { 201: S.User } },
      handler: async (request, reply) => reply.status(201).send(await identity.accounts.createUser(request.body, actorOf(request))),
    }),
    route({
      method: 'GET', conditional: 'read', path: '/api/v1/auth/users/{id}', access: 'users:read', tags, summary: 'Read one account',
      schema: { params: IdParams(), response: { 200: S.User } },
      handler: (request, reply) => taggedVersion(reply, identity.accounts.userVersion(request.params.id)),
    }),
    route({
      method: 'PUT', conditional: 'write', path: '/api/v1/auth/users/{id}', access: 'users:write', tags, summary: 'Change an account (fields not sent are kept)',
      schema: { params: IdParams(), body: S.UpdateUserBody, response: { 200: S.User } },
      handler: async (request, reply) => {
        const { username, password, email, role, enabled } = request.body;
        const updated = await identity.accounts.updateUser(request.params.id, { username, password, email, role, enabled }, actorOf(request), ifMatchOf(request));
        return taggedVersion(reply, { record: updated, version: identity.accounts.userVersion(updated.id).version });
      },
    }),
    route({
      method: 'DELETE', conditional: 'write', path: '/api/v1/auth/users/{id}', access: 'users:write', tags,
      summary: 'Delete an account (not your own; deleting the last one returns the appliance to first boot)',
      schema: { params: IdParams() },
      handler: (request, reply) => {
        identity.accounts.deleteUser(request.params.id, actorOf(request), ifMatchOf(request));
        return reply.status(204).send();
      },
    }),
    route({
      method: 'GET', path: '/api/v1/auth/audit', access: 'users:read', tags, summary: 'Auth audit log, newest first',
      schema: { querystring: S.AuditQuery, response: { 200: { type: 'array', items: S.AuditEntry } } },
      handler: (request, reply) => {
        const { limit, offset } = request.query;
        const { records, total } = identity.audit.list(limit, offset);
        reply.header('x-total-count', String(total));
        return records;
      },
    }),
    {
      method: 'GET', conditional: 'read', path: '/api/v1/auth/roles', access: 'users:read', tags, summary: 'Built-in and custom roles',
      schema: { response: { 200: { type: 'array', items: S.Role } } },
      handler: () => identity.roles.list(),
    },
    route({
      method: 'POST', path: '/api/v1/auth/roles', access: 'users:write', tags, summary: 'Create a custom role',
      schema: { body: S.RoleBody, response: { 201: S.Role } },
      handler: (request, reply) => reply.status(201).send(identity.roleAdmin.createRole(request.body, actorOf(request))),
    }),
    route({
      method: 'GET', conditional: 'read', path: '/api/v1/auth/roles/{id}', access: 'users:read', tags, summary: 'Read one role (built-in or custom)',
      schema: { params: RoleIdParams, response: { 200: S.Role } },
      handler: (request, reply) => taggedVersion(reply, identity.roleAdmin.roleVersion(request.params.id)),
    }),
    route({
      method: 'PUT', conditional: 'write', path: '/api/v1/auth/roles/{id}', access: 'users:write', tags, summary: 'Change a custom role (built-in roles are immutable)',
      schema: { params: RoleIdParams, body: S.RolePatch, response: { 200: S.Role } },
      handler: (request, reply) => {
        const updated = identity.roleAdmin.updateRole(request.params.id, request.body, actorOf(request), ifMatchOf(request));
        return taggedVersion(reply, { record: updated, version: identity.roleAdmin.roleVersion(updated.id).version });
      },
    }),
    route({
      method: 'DELETE', conditional: 'write', path: '/api/v1/auth/roles/{id}', access: 'users:write', tags, summary: 'Delete a custom role that no account holds',
      schema: { params: RoleIdParams },
      handler: (request, reply) => {
        identity.roleAdmin.deleteRole(request.params.id, actorOf(request), ifMatchOf(request));
        return reply.status(204).send();
      },
    }),
    {
      method: 'GET', path: '/api/v1/auth/permissions', access: 'users:read', tags, summary: 'The permission catalogue, in bit order',
      schema: { response: { 200: { type: 'array', items: S.PermissionInfo } } },
      handler: () =>
        PERMISSIONS.map((key, bit) => {
          const [category, action] = key.split(':');
          return { key, bit, category, action, description: PERMISSION_DESCRIPTIONS[key] };
        }),
    },
    route({
      method: 'POST', path: '/api/v1/auth/api-keys', access: 'users:write', tags,
      summary: 'Create an API key with its own permissions; the secret (`key`) is returned once',
      schema: { body: S.ApiKeyBody, response: { 201: S.CreatedApiKey } },
      handler: (request, reply) => reply.status(201).send(identity.keyIssuer.createApiKey(request.body, actorOf(request))),
    }),
    {
      method: 'GET', path: '/api/v1/auth/api-keys', access: 'users:write', tags, summary: 'API keys by name and creation date (never the secret)',
      schema: { response: { 200: { type: 'array', items: S.ApiKey } } },
      handler: () => identity.apiKeys.list(),
    },
    route({
      method: 'DELETE', path: '/api/v1/auth/api-keys/{id}', access: 'users:write', tags, summary: 'Revoke an API key (it answers 401 at once)',
      schema: { params: IdParams() },
      handler: (request, reply) => {
        identity.keyIssuer.revokeApiKey(request.params.id, actorOf(request));
        return reply.status(204).send();
      },
    }),
    ...settingsRoutes,
  ];
}
