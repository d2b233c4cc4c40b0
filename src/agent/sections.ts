import { isDeepStrictEqual } from 'node:util';
import type { DriftEntry } from './protocol.js';
import type { SectionObjects } from './state.js';

/**
 * The configuration sections a template may own: the appliance collection its objects live in and the fields
 * that name an object there (how the agent finds the local object a template object is). Rules and NAT rules
 * are named by their `label`; DNS host records by host, domain and record type.
 */
export const TEMPLATE_SECTIONS = {
  aliases: { path: '/api/v1/aliases', key: ['name'] },
  assertions: { path: '/api/v1/assertions', key: ['name'] },
  schedules: { path: '/api/v1/schedules', key: ['name'] },
  rules: { path: '/api/v1/rules', key: ['label'] },
  nat: { path: '/api/v1/nat', key: ['label'] },
  dns_hosts: { path: '/api/v1/dns/resolver/hosts', key: ['hostname', 'domain', 'record_type'] },
  dns_domains: { path: '/api/v1/dns/resolver/domains', key: ['domain'] },
} as const satisfies Record<string, { path: string; key: readonly string[] }>;
export type TemplateSection = keyof typeof TEMPLATE_SECTIONS;

type Objects = Record<string, unknown>[];
export type Operation = { op: 'create'; path: string; body: Record<string, unknown> } | { op: 'update'; path: string; body: Record<string, unknown> } | { op: 'delete'; path: string };

const specOf = (section: string) => TEMPLATE_SECTIONS[section as TemplateSection] as { path: string; key: readonly string[] } | undefined;

/** An object's name within its section: its key fields, joined with `/` (a DNS host: `www/example.com/A`). */
export function objectName(section: string, object: Record<string, unknown>): string {
  return (specOf(section)?.key ?? ['name']).map((field) => String(object[field])).join('/');
}

/** The section whose collection an operation's path is in. */
export const sectionOfPath = (path: string): TemplateSection | undefined =>
  (Object.keys(TEMPLATE_SECTIONS) as TemplateSection[]).find((section) => path === TEMPLATE_SECTIONS[section].path || path.startsWith(`${TEMPLATE_SECTIONS[section].path}/`));

/** The fields of a template object whose local value differs (the template's fields only; others are the appliance's). */
export function differingFields(desired: Record<string, unknown>, local: Record<string, unknown>): string[] {
  return Object.keys(desired).filter((field) => !isDeepStrictEqual(desired[field], local[field]));
}

/**
 * The change set that makes an appliance's owned sections what a revision says: objects created, updated where a
 * field differs, and deleted when the previous revision owned them and this one does not. Objects the templates
 * never owned are left alone (they stay local).
 */
export function planChanges(document: SectionObjects, previous: SectionObjects | null, local: (section: string) => Objects): Operation[] {
  const operations: Operation[] = [];
  const sections = new Set([...Object.keys(document.sections), ...Object.keys(previous?.sections ?? {})]);
  for (const section of sections) {
    const spec = specOf(section);
    if (!spec) throw new Error(`section "${section}" cannot be owned by a template on this appliance`);
    const byName = new Map(local(section).map((object) => [objectName(section, object), object]));
    const desired = document.sections[section] ?? [];
    const wanted = new Set(desired.map((object) => objectName(section, object)));
    for (const object of desired) {
      const existing = byName.get(objectName(section, object));
      if (!existing) operations.push({ op: 'create', path: spec.path, body: object });
      else if (differingFields(object, existing).length > 0) operations.push({ op: 'update', path: `${spec.path}/${String(existing.id)}`, body: object });
    }
    for (const object of previous?.sections[section] ?? []) {
      const name = objectName(section, object);
      const existing = byName.get(name);
      if (existing && !wanted.has(name)) operations.push({ op: 'delete', path: `${spec.path}/${String(existing.id)}` });
    }
  }
  return operations;
}

/**
 * Local edits to what the applied revision owns: a changed field (with its local value, which the controller
 * needs to adopt the edit into the template), or an object deleted here.
 */
export function driftOf(applied: SectionObjects, local: (section: string) => Objects): DriftEntry[] {
  const drift: DriftEntry[] = [];
  for (const [section, objects] of Object.entries(applied.sections)) {
    const byName = new Map(local(section).map((object) => [objectName(section, object), object]));
    for (const object of objects) {
      const name = objectName(section, object);
      const existing = byName.get(name);
      if (!existing) drift.push({ section, name, kind: 'missing', fields: [] });
      else {
        const fields = differingFields(object, existing);
        if (fields.length > 0) drift.push({ section, name, kind: 'changed', fields, values: Object.fromEntries(fields.map((field) => [field, existing[field] ?? null])) });
      }
    }
  }
  return drift;
}
