import type { FastifyInstance } from 'fastify';
import type { Permission } from '../../src/core/permissions.js';

export const ADMIN = { username: 'admin', password: 'Adm1n-password!' };
export type Headers = Record<string, string>;

/** Registers the first admin when the appliance is at first boot, logs in, and returns Bearer headers. */
export async function adminHeaders(app: FastifyInstance): Promise<Headers> {
  await app.inject({ method: 'POST', url: '/api/v1/auth/register', payload: ADMIN });
  const login = await app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: ADMIN });
  if (login.statusCode !== 200) throw new Error(`admin login failed: ${login.statusCode} ${login.body}`);
  return { authorization: `Bearer ${JSON.parse(login.body).access_token as string}` };
}

/** An API key holding exactly the given permissions (possibly none), created by the admin. */
export async function headersWithPermissions(app: FastifyInstance, permissions: Permission[], admin?: Headers): Promise<Headers> {
  const headers = admin ?? (await adminHeaders(app));
  const created = await app.inject({
    method: 'POST',
    url: '/api/v1/auth/api-keys',
    headers,
    payload: { name: `test-${permissions.length}-${Math.random().toString(36).slice(2)}`, permissions },
  });
  if (created.statusCode !== 201) throw new Error(`api key creation failed: ${created.statusCode} ${created.body}`);
  return { authorization: `ApiKey ${JSON.parse(created.body).key as string}` };
}
