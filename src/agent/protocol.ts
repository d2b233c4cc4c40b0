import { X509Certificate } from 'node:crypto';
import { badRequest } from '../core/errors.js';

/**
 * The messages of the agent connection (one outbound WebSocket from the appliance, mutually authenticated with
 * TLS client certificates). JSON, one object per message, `type` first. The controller only ever nudges: the agent
 * pulls its desired revision by number, so a lost message loses no state.
 */
export interface Health {
  status: 'ok' | 'degraded';
  failing_assertions: string[];
}

export interface DriftEntry {
  section: string;
  name: string;
  /**
   * `changed` fields differ from the template's, `missing` the object was deleted locally, `moved` the owned rules
   * are no longer the block the template places (rule-order.ts; never adopted: the next rollout restores the order).
   */
  kind: 'changed' | 'missing' | 'moved';
  fields: string[];
  /** The local values of the changed fields (sent to the controller for adoption; not stored with the drift). */
  values?: Record<string, unknown>;
}

export type AgentMessage =
  | { type: 'hello'; version: string; applied_revision: number }
  | { type: 'pull' }
  | { type: 'report'; revision: number; outcome: 'applied' | 'failed'; reason: string | null }
  | { type: 'status'; version: string; health: Health; drift: DriftEntry[] };

export type ControllerMessage =
  | { type: 'nudge' }
  | { type: 'revision'; number: number; document: { sections: Record<string, Record<string, unknown>[]>; rule_placement?: 'priority' | 'first' | 'last' } | null };

/** WebSocket close codes of the agent connection. */
export const CLOSE_REVOKED = 4403;

/** The paths the controller serves agents on (the enrolment is plain HTTPS; the connection needs the certificate). */
export const AGENT_PATHS = { ca: '/fleet/v1/ca', enrol: '/fleet/v1/enrol', connect: '/fleet/v1/agent' } as const;

export function parseAgentMessage(text: string): AgentMessage | null {
  try {
    const message = JSON.parse(text) as AgentMessage;
    if (typeof message !== 'object' || message === null) return null;
    switch (message.type) {
      case 'hello': return typeof message.version === 'string' && Number.isInteger(message.applied_revision) ? message : null;
      case 'pull': return message;
      case 'report': return Number.isInteger(message.revision) && message.revision > 0 && (message.outcome === 'applied' || message.outcome === 'failed') ? { ...message, reason: typeof message.reason === 'string' ? message.reason.slice(0, 2000) : null } : null;
      case 'status': return typeof message.version === 'string' && typeof message.health === 'object' && Array.isArray(message.drift) ? message : null;
      default: return null;
    }
  } catch {
    return null;
  }
}

/** What an administrator hands an appliance: `bwf1.<token id>.<secret>.<SHA-256 of the controller CA>`. */
export const TOKEN_PREFIX = 'bwf1';
const TOKEN_ID = /^[0-9a-f]{16}$/;
const HEX_256 = /^[0-9a-f]{64}$/;

export interface ParsedToken {
  id: string;
  secret: string;
  caFingerprint: string;
}

export function parseEnrolmentToken(text: string, field: string): ParsedToken {
  const [prefix, id, secret, caFingerprint, ...rest] = text.split('.');
  if (prefix !== TOKEN_PREFIX || rest.length > 0 || !TOKEN_ID.test(id ?? '') || !HEX_256.test(secret ?? '') || !HEX_256.test(caFingerprint ?? '')) {
    throw badRequest(`${field}: not a Bulwark enrolment token (bwf1.<id>.<secret>.<ca fingerprint>)`);
  }
  return { id, secret, caFingerprint };
}

/** SHA-256 of a certificate's DER, lower-case hex without colons: what an enrolment token pins. */
export const certificateFingerprint = (pem: string): string => new X509Certificate(pem).fingerprint256.replaceAll(':', '').toLowerCase();
