import { isDeepStrictEqual } from 'node:util';
import type { DriftEntry } from './protocol.js';
import type { SectionObjects } from './state.js';

/**
 * The configuration sections a template may own: the appliance collection its objects live in and the field
 * that names an object there (how the agent finds the local object a template object is).
 */
export const TEMPLATE_SECTIONS = {
  aliases: { path: '/api/v1/aliases', key: 'name' },
  assertions: { path: '/api/v1/assertions', key: 'name' },
  schedules: { path: '/api/v1/schedules', key: 'name' },
} as const;
export type TemplateSection = keyof typeof TEMPLATE_SECTIONS;

type Objects = Record<string, unknown>[];
export type Operation = { op: 'create'; path: string; body: Record<string, unknown> } | { op: 'update'; path: string; body: Record<string, unknown> } | { op: 'delete'; path: string };

const keyOf = (section: string) => TEMPLATE_SECTIONS[section as TemplateSection]?.key ?? 'name';

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
    const spec = TEMPLATE_SECTIONS[section as TemplateSection];
    if (!spec) throw new Error(`section "${section}" cannot be owned by a template on this appliance`);
    const current = local(section);
    const byKey = new Map(current.map((object) => [object[spec.key], object]));
    const desired = document.sections[section] ?? [];
    const wanted = new Set(desired.map((object) => object[spec.key]));
    for (const object of desired) {
      const existing = byKey.get(object[spec.key]);
      if (!existing) operations.push({ op: 'create', path: spec.path, body: object });
      else if (differingFields(object, existing).length > 0) operations.push({ op: 'update', path: `${spec.path}/${String(existing.id)}`, body: object });
    }
    for (const object of previous?.sections[section] ?? []) {
      const existing = byKey.get(object[spec.key]);
      if (existing && !wanted.has(object[spec.key])) operations.push({ op: 'delete', path: `${spec.path}/${String(existing.id)}` });
    }
  }
  return operations;
}

/** Local edits to what the applied revision owns: a changed field, or an object deleted here. */
export function driftOf(applied: SectionObjects, local: (section: string) => Objects): DriftEntry[] {
  const drift: DriftEntry[] = [];
  for (const [section, objects] of Object.entries(applied.sections)) {
    const key = keyOf(section);
    const byKey = new Map(local(section).map((object) => [object[key], object]));
    for (const object of objects) {
      const existing = byKey.get(object[key]);
      const name = String(object[key]);
      if (!existing) drift.push({ section, name, kind: 'missing', fields: [] });
      else {
        const fields = differingFields(object, existing);
        if (fields.length > 0) drift.push({ section, name, kind: 'changed', fields });
      }
    }
  }
  return drift;
}
