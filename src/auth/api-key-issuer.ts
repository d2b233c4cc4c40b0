import type { Clock } from '../core/clock.js';
import { isoTime } from '../core/clock.js';
import { badRequest, forbidden } from '../core/errors.js';
import type { StreamRegistry } from '../live/stream-registry.js';
import { recordChange, type Actor } from './actor.js';
import type { ApiKeyRecord, ApiKeys } from './api-keys.js';
import type { AuthAudit } from './audit.js';
import { normalisePermissions } from './roles.js';
import { DAEMON_KEY_NAME } from './service-account.js';

const RESERVED_KEY_NAMES = [DAEMON_KEY_NAME, 'cluster-peer', 'plugin:'];

/** API keys as people create and revoke them: never beyond the creator's permissions, never a reserved name. */
export class ApiKeyIssuer {
  constructor(
    private readonly clock: Clock,
    private readonly apiKeys: ApiKeys,
    private readonly audit: AuthAudit,
    private readonly streams: StreamRegistry,
  ) {}

  createApiKey(input: { name: string; permissions: string[]; expires_at?: string }, actor: Actor): ApiKeyRecord & { key: string } {
    const identity = actor.identity!;
    const name = input.name.trim();
    if (!name) throw badRequest('body.name must not be blank');
    if (RESERVED_KEY_NAMES.some((reserved) => name.toLowerCase().startsWith(reserved))) throw badRequest(`body.name "${name}" is reserved`);
    const permissions = normalisePermissions(input.permissions);
    const beyond = permissions.filter((p) => !identity.permissions.has(p));
    if (beyond.length > 0) throw forbidden(`a key cannot hold permissions its creator lacks: ${beyond.join(', ')}`);
    let expiresAt: string | null = null;
    if (input.expires_at !== undefined) {
      const time = Date.parse(input.expires_at);
      if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]00:?00)$/.test(input.expires_at) || Number.isNaN(time)) {
        throw badRequest('body.expires_at must be an ISO 8601 UTC timestamp, e.g. 2027-01-01T00:00:00Z');
      }
      if (time <= this.clock.now()) throw badRequest('body.expires_at must be in the future');
      expiresAt = isoTime(time);
    }
    const { record, key } = this.apiKeys.create({ name, permissions, ownerId: identity.userId, createdBy: identity.username, expiresAt });
    recordChange(this.audit, 'api_key_created', actor, record.id, `${name}: ${permissions.join(' ')}`);
    return { ...record, key };
  }

  revokeApiKey(id: string, actor: Actor): void {
    const record = this.apiKeys.remove(id);
    this.streams.recheck();
    recordChange(this.audit, 'api_key_revoked', actor, id, record.name);
  }
}
