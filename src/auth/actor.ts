import type { FastifyRequest } from 'fastify';
import type { Identity } from '../http/access.js';
import type { AuthAudit } from './audit.js';

/** Who did something, for the audit. */
export interface Actor {
  identity: Identity | null;
  clientIp: string | null;
}

export const actorOf = (request: FastifyRequest): Actor => ({ identity: request.identity, clientIp: request.ip });

/** A write's precondition (If-Match), given the target's version as it is now; throws to refuse the write. */
export type VersionCheck = (currentVersion: unknown) => void;

/** Writes down a successful change to accounts, roles, keys or settings, naming who made it. */
export function recordChange(audit: AuthAudit, action: string, actor: Actor, targetId: string | null, details: string): void {
  audit.record({ action, outcome: 'success', actor: actor.identity?.username ?? null, actorId: actor.identity?.userId ?? null, targetId, clientIp: actor.clientIp, details });
}
