import { notFound } from '../core/errors.js';
import type { StreamRegistry } from '../live/stream-registry.js';
import { recordChange, type Actor, type VersionCheck } from './actor.js';
import type { AuthAudit } from './audit.js';
import type { RoleRecord, Roles } from './roles.js';
import type { Sessions } from './sessions.js';
import type { Users } from './users.js';

/** Custom roles as administrators change them; a changed role makes its holders' access tokens refresh at once. */
export class RoleAdmin {
  constructor(
    private readonly parts: { roles: Roles; users: Users; sessions: Sessions; audit: AuthAudit; streams: StreamRegistry },
  ) {}

  createRole(input: { name: string; permissions: string[]; description?: string | null }, actor: Actor) {
    const role = this.parts.roles.create(input);
    recordChange(this.parts.audit, 'role_created', actor, role.id, `${role.name}: ${role.permissions.join(' ')}`);
    return role;
  }

  /** A custom role, and the version its entity tag is made of. */
  roleVersion(id: string): { record: RoleRecord; version: unknown } {
    const record = this.parts.roles.byId(id);
    if (!record) throw notFound(`role ${id} not found`);
    return { record, version: record };
  }

  updateRole(id: string, patch: { name?: string; permissions?: string[]; description?: string | null }, actor: Actor, expect?: VersionCheck) {
    expect?.(this.roleVersion(id).version);
    const role = this.parts.roles.update(id, patch);
    this.parts.sessions.invalidateTokensOf(this.parts.users.withRole(id).map((u) => u.id));
    this.parts.streams.recheck();
    recordChange(this.parts.audit, 'role_updated', actor, id, `${role.name}: ${role.permissions.join(' ')}`);
    return role;
  }

  deleteRole(id: string, actor: Actor, expect?: VersionCheck): void {
    expect?.(this.roleVersion(id).version);
    const role = this.parts.roles.remove(id);
    recordChange(this.parts.audit, 'role_deleted', actor, id, role.name);
  }
}
