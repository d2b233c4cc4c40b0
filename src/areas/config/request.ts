import type { FastifyRequest } from 'fastify';
import type { Actor } from './service.js';

/** Import bodies carry a whole configuration: allow more than the global 10 MiB. */
export const IMPORT_BODY_LIMIT = 64 * 1024 * 1024;

/** The caller, with the permissions whole-configuration writes hold it to (an anonymous caller holds none). */
export const actorOfRequest = (request: FastifyRequest): Actor => ({
  name: request.identity?.username ?? 'unknown',
  clientIp: request.ip,
  permissions: request.identity?.permissions ?? new Set(),
  localAddress: request.socket?.localAddress,
  confirmManagementCut: (request.query as { confirm_management_cut?: boolean } | undefined)?.confirm_management_cut === true,
});
