import { isDeepStrictEqual } from 'node:util';
import type { DriftEntry } from './protocol.js';
import { placeRules, ruleOrderDrift } from './rule-order.js';
import { objectName, sectionSpec, type SectionSpec } from './section-catalogue.js';
import type { SectionObjects } from './state.js';

export { objectName, sectionOfPath, TEMPLATE_SECTIONS, type TemplateSection } from './section-catalogue.js';

type Objects = Record<string, unknown>[];
/** A change-set operation; `object` is the template object a write was made from when its body differs (not sent). */
export type Operation =
  | { op: 'create'; path: string; key?: string; body: Record<string, unknown>; object?: Record<string, unknown> }
  | { op: 'update'; path: string; body: Record<string, unknown>; object?: Record<string, unknown> }
  | { op: 'delete'; path: string };

/** Each nested section's parents on this appliance, by name → id (a WireGuard tunnel's name → its id). */
export type Parents = (section: string) => ReadonlyMap<string, string>;

function specOf(section: string): SectionSpec {
  const spec = sectionSpec(section);
  if (!spec) throw new Error(`section "${section}" cannot be owned by a template on this appliance`);
  return spec;
}

/**
 * The fields of a template object whose local value differs (the template's fields only; others are the
 * appliance's). A secret field is never read back: it differs when the appliance says none is stored, or — when
 * planning a revision — when its value is not the one the previous revision wrote (`before`; null: the previous
 * revision did not own the object, so what the appliance holds is unknown and the template's is written).
 */
export function differingFields(section: string, desired: Record<string, unknown>, local: Record<string, unknown>, before?: Record<string, unknown> | null): string[] {
  const spec = sectionSpec(section);
  const secrets = spec?.secrets ?? {};
  const form = spec?.keyForm;
  return Object.keys(desired).filter((field) => {
    // A key field is the same as the appliance's uniqueness has it (a MAC in either spelling, a name in any case).
    if (form && spec.key.includes(field) && typeof desired[field] === 'string' && typeof local[field] === 'string') return form(desired[field]) !== form(local[field]);
    if (!Object.hasOwn(secrets, field)) return !isDeepStrictEqual(desired[field], local[field]);
    if (local[secrets[field]] !== true) return true;
    return before !== undefined && (before === null || !isDeepStrictEqual(before[field], desired[field]));
  });
}

/** Where a new object of the section is created: its collection, under the parent the object names when nested. */
function collectionOf(section: string, spec: SectionSpec, object: Record<string, unknown>, parents: Parents): string {
  if (!spec.parent) return spec.path;
  const parent = String(object[spec.parent.field]);
  const id = parents(section).get(parent);
  if (id === undefined) throw new Error(`${section}: ${spec.parent.field} "${parent}" does not exist on this appliance (it is the appliance's own: create it first)`);
  return `${spec.path}/${id}/${spec.parent.child}`;
}

/** An existing local object's path (a nested one's parent id is on the object, as `<field>_id`). */
const itemOf = (spec: SectionSpec, existing: Record<string, unknown>): string =>
  spec.parent ? `${spec.path}/${String(existing[`${spec.parent.field}_id`])}/${spec.parent.child}/${String(existing.id)}` : `${spec.path}/${String(existing.id)}`;

const byName = (section: string, objects: Objects) => new Map(objects.map((object) => [objectName(section, object), object]));

/** The local object of that name; a settings section's document always exists (an empty read is all defaults). */
const localOf = (spec: SectionSpec | undefined, locals: Map<string, Record<string, unknown>>, name: string) =>
  spec?.singleton ? (locals.get(name) ?? {}) : locals.get(name);

/**
 * The change set that makes an appliance's owned sections what a revision says: objects created, updated where a
 * field differs, and deleted when the previous revision owned them and this one does not. Objects the templates
 * never owned are left alone (they stay local), and so is one the appliance keeps (a built-in blocklist source,
 * which only the appliance may delete) once no longer owned. A settings section is only ever updated (a template that stops
 * owning it leaves its values as they are). Rules placed as a block end with the reorder that keeps it.
 */
export function planChanges(document: SectionObjects, previous: SectionObjects | null, local: (section: string) => Objects, parents: Parents = () => new Map()): Operation[] {
  const operations: Operation[] = [];
  const sections = new Set([...Object.keys(document.sections), ...Object.keys(previous?.sections ?? {})]);
  for (const section of sections) {
    const spec = specOf(section);
    const locals = byName(section, local(section));
    const before = byName(section, previous?.sections[section] ?? []);
    const desired = document.sections[section] ?? [];
    const wanted = new Set(desired.map((object) => objectName(section, object)));
    const write = (op: 'create' | 'update', object: Record<string, unknown>) => (spec.toBody ? { body: spec.toBody(object, op), object } : { body: object });
    for (const object of desired) {
      const name = objectName(section, object);
      const existing = localOf(spec, locals, name);
      if (!existing) operations.push({ op: 'create', path: collectionOf(section, spec, object, parents), ...write('create', object) });
      else if (differingFields(section, object, existing, before.get(name) ?? null).length > 0) {
        // Without an update route, the same change set deletes the object and creates it as the template has it.
        if (spec.replaced) operations.push({ op: 'delete', path: itemOf(spec, existing) }, { op: 'create', path: collectionOf(section, spec, object, parents), ...write('create', object) });
        else operations.push({ op: 'update', path: spec.singleton ? spec.path : itemOf(spec, existing), ...write('update', object) });
      }
    }
    if (spec.singleton) continue;
    for (const name of before.keys()) {
      const existing = locals.get(name);
      if (existing && !wanted.has(name) && !spec.kept?.(existing)) operations.push({ op: 'delete', path: itemOf(spec, existing) });
    }
  }
  const reorder = placeRules(document, local('rules'), operations);
  if (reorder) operations.push(reorder as Operation);
  return operations;
}

/**
 * Local edits to what the applied revision owns: a changed field (with its local value, which the controller
 * needs to adopt the edit into the template; a secret's is never read), an object deleted here, or rules moved out
 * of the block the template places.
 */
export function driftOf(applied: SectionObjects, local: (section: string) => Objects): DriftEntry[] {
  const drift: DriftEntry[] = [];
  for (const [section, objects] of Object.entries(applied.sections)) {
    const spec = sectionSpec(section);
    const secrets = spec?.secrets ?? {};
    const locals = byName(section, local(section));
    for (const object of objects) {
      const name = objectName(section, object);
      const existing = localOf(spec, locals, name);
      if (!existing) drift.push({ section, name, kind: 'missing', fields: [] });
      else {
        const fields = differingFields(section, object, existing);
        const readable = fields.filter((field) => !Object.hasOwn(secrets, field));
        if (fields.length > 0) drift.push({ section, name, kind: 'changed', fields, values: Object.fromEntries(readable.map((field) => [field, existing[field] ?? null])) });
      }
    }
  }
  const moved = applied.sections.rules ? ruleOrderDrift(applied, local('rules')) : null;
  return moved ? [...drift, moved] : drift;
}
