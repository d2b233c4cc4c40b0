import type { Db } from '../store/database.js';
import type { Clock } from '../core/clock.js';
import { isoTime } from '../core/clock.js';
import { newId } from '../core/ids.js';
import { BUILTIN_ROLES, PERMISSIONS, isPermission, toMask, type Permission } from '../core/permissions.js';
import { badRequest, conflict, forbidden, notFound } from '../core/errors.js';

export interface RoleRecord {
  id: string;
  name: string;
  permissions: Permission[];
  permission_bits: number;
  builtin: boolean;
  description: string | null;
  created_at: string;
  updated_at: string;
}

interface RoleRow {
  id: string;
  name: string;
  permissions: string;
  description: string | null;
  builtin: number;
  created_at: string;
  updated_at: string;
}

const BUILTIN_DESCRIPTIONS: Record<keyof typeof BUILTIN_ROLES, string> = {
  admin: 'Full system access',
  operator: 'Operational access without system administration',
  viewer: 'Read-only access',
  system: 'Internal services: the locked daemon account and cluster peers (cannot be assigned to people)',
  'fleet-agent': "The fleet agent's locked account after an enrolment at start (cannot be assigned to people)",
};

export const builtinRoleId = (name: string) => `builtin-${name}`;
const LOCKED_ACCOUNT_ROLES = new Set([builtinRoleId('system'), builtinRoleId('fleet-agent')]);

/** Permissions in catalogue (bit) order, without duplicates; unknown names are a 400. */
export function normalisePermissions(values: readonly string[], field = 'body.permissions'): Permission[] {
  const unknown = values.filter((value) => !isPermission(value));
  if (unknown.length > 0) throw badRequest(`${field}: unknown permission ${unknown.map((u) => `"${u}"`).join(', ')}`);
  const set = new Set(values);
  return PERMISSIONS.filter((p) => set.has(p));
}

const NO_PERMISSIONS: ReadonlySet<Permission> = new Set();

/** Built-in roles (re-written at every start, immutable) and custom roles. */
export class Roles {
  private readonly cache = new Map<string, RoleRecord>();
  /** Each role's permissions as a set, built once per change, for the per-request credential check. */
  private readonly permissionSets = new Map<string, ReadonlySet<Permission>>();

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {
    const now = isoTime(clock.now());
    const upsert = db.prepare(
      `INSERT INTO roles (id, name, permissions, description, builtin, created_at, updated_at) VALUES (?, ?, ?, ?, 1, ?, ?)
       ON CONFLICT (id) DO UPDATE SET name = excluded.name, permissions = excluded.permissions, description = excluded.description, builtin = 1`,
    );
    db.transaction(() => {
      for (const [name, permissions] of Object.entries(BUILTIN_ROLES)) {
        upsert.run(builtinRoleId(name), name, JSON.stringify(permissions), BUILTIN_DESCRIPTIONS[name as keyof typeof BUILTIN_ROLES], now, now);
      }
    })();
    this.reload();
  }

  list(): RoleRecord[] {
    return [...this.cache.values()].sort((a, b) => Number(b.builtin) - Number(a.builtin) || a.name.localeCompare(b.name));
  }

  byId(id: string): RoleRecord | undefined {
    return this.cache.get(id);
  }

  byName(name: string): RoleRecord | undefined {
    const lower = name.toLowerCase();
    return [...this.cache.values()].find((role) => role.name.toLowerCase() === lower);
  }

  /** A role named by id or name, for assignment to a person: the roles of locked accounts are refused. */
  assignable(reference: string, field = 'body.role'): RoleRecord {
    const role = this.byId(reference) ?? this.byName(reference);
    if (!role) throw badRequest(`${field}: role "${reference}" does not exist`);
    if (LOCKED_ACCOUNT_ROLES.has(role.id)) throw badRequest(`${field}: the ${role.name} role cannot be assigned to a person`);
    return role;
  }

  create(input: { name: string; permissions: string[]; description?: string | null }): RoleRecord {
    const name = input.name.trim();
    if (!name) throw badRequest('body.name must not be blank');
    const permissions = normalisePermissions(input.permissions);
    if (this.byName(name)) throw conflict(`role "${name}" already exists`);
    const now = isoTime(this.clock.now());
    const id = newId();
    this.db
      .prepare('INSERT INTO roles (id, name, permissions, description, builtin, created_at, updated_at) VALUES (?, ?, ?, ?, 0, ?, ?)')
      .run(id, name, JSON.stringify(permissions), input.description ?? null, now, now);
    this.reload();
    return this.byId(id)!;
  }

  update(id: string, patch: { name?: string; permissions?: string[]; description?: string | null }): RoleRecord {
    const role = this.byId(id);
    if (!role) throw notFound(`role ${id} not found`);
    if (role.builtin) throw forbidden(`built-in role ${role.name} cannot be changed`);
    const name = patch.name !== undefined ? patch.name.trim() : role.name;
    if (!name) throw badRequest('body.name must not be blank');
    const clash = this.byName(name);
    if (clash && clash.id !== id) throw conflict(`role "${name}" already exists`);
    const permissions = patch.permissions !== undefined ? normalisePermissions(patch.permissions) : role.permissions;
    const description = patch.description !== undefined ? patch.description : role.description;
    this.db
      .prepare('UPDATE roles SET name = ?, permissions = ?, description = ?, updated_at = ? WHERE id = ?')
      .run(name, JSON.stringify(permissions), description, isoTime(this.clock.now()), id);
    this.reload();
    return this.byId(id)!;
  }

  remove(id: string): RoleRecord {
    const role = this.byId(id);
    if (!role) throw notFound(`role ${id} not found`);
    if (role.builtin) throw forbidden(`built-in role ${role.name} cannot be deleted`);
    const assigned = this.db.prepare('SELECT count(*) AS n FROM users WHERE role_id = ?').get(id) as { n: number };
    if (assigned.n > 0) throw conflict(`role "${role.name}" is still assigned to ${assigned.n} user(s)`);
    this.db.prepare('DELETE FROM roles WHERE id = ?').run(id);
    this.reload();
    return role;
  }

  /** The permissions a role grants now (empty for a role that no longer exists). */
  permissionSetOf(roleId: string): ReadonlySet<Permission> {
    return this.permissionSets.get(roleId) ?? NO_PERMISSIONS;
  }

  private reload(): void {
    this.cache.clear();
    this.permissionSets.clear();
    for (const row of this.db.prepare('SELECT * FROM roles').all() as RoleRow[]) {
      const permissions = JSON.parse(row.permissions) as Permission[];
      this.permissionSets.set(row.id, new Set(permissions));
      this.cache.set(row.id, {
        id: row.id,
        name: row.name,
        permissions,
        permission_bits: Number(toMask(permissions)),
        builtin: row.builtin === 1,
        description: row.description,
        created_at: row.created_at,
        updated_at: row.updated_at,
      });
    }
  }
}
