import { forbidden } from '../../core/errors.js';
import type { Permission, RouteAccess } from '../../core/permissions.js';
import type { KindCatalogue } from '../../store/kind-catalogue.js';
import type { ConfigurationDiff } from './diff.js';

/** A section (kind) that a whole-configuration write would change and the caller may not write directly. */
export interface RefusedSection {
  kind: string;
  permission: RouteAccess;
}

/** True when a caller holding `permissions` passes `access` (undefined permissions: an internal actor). */
export function holds(access: RouteAccess, permissions: ReadonlySet<Permission> | undefined): boolean {
  if (permissions === undefined || access === 'public' || access === 'authenticated') return true;
  return permissions.has(access);
}

/** The kinds among `kinds` that a caller with `permissions` could not write through their own routes. */
export function refusedKinds(kinds: Iterable<string>, catalogue: KindCatalogue, permissions: ReadonlySet<Permission> | undefined): RefusedSection[] {
  const refused: RefusedSection[] = [];
  for (const kind of new Set(kinds)) {
    const permission = catalogue.writeAccessOf(kind);
    if (!holds(permission, permissions)) refused.push({ kind, permission });
  }
  return refused.sort((a, b) => a.kind.localeCompare(b.kind));
}

/** The sections a diff changes that the caller could not change directly. */
export function refusedSections(diff: ConfigurationDiff, catalogue: KindCatalogue, permissions: ReadonlySet<Permission> | undefined): RefusedSection[] {
  const changed = Object.entries(diff.kinds)
    .filter(([, entry]) => entry.added.length + entry.removed.length + entry.changed.length > 0)
    .map(([kind]) => kind);
  return refusedKinds(changed, catalogue, permissions);
}

/** 403 naming every refused section and the permission it needs. */
export function assertNoRefusedSections(refused: readonly RefusedSection[], what: string): void {
  if (refused.length === 0) return;
  const named = refused.map((r) => `${r.kind} (needs ${r.permission})`).join(', ');
  throw forbidden(`${what} would change section(s) you cannot write: ${named}`);
}
