import { randomUUID } from 'node:crypto';
import type { Applier, ApplyOutcome } from './agent.js';
import type { DriftEntry, Health } from './protocol.js';
import { isRuleReorder } from './rule-order.js';
import { sectionSpec, type SectionSpec } from './section-catalogue.js';
import { driftOf, planChanges, sectionOfPath, TEMPLATE_SECTIONS } from './sections.js';
import type { SectionObjects } from './state.js';

/**
 * A stand-in for an appliance's configuration, in memory: the light agents of the scale tests and the bench run
 * the same agent code against it. It applies a revision's change set all or none; `refuse` lets a test make it
 * refuse a document (as an appliance's assertion would).
 */
export class MemoryApplier implements Applier {
  readonly objects = new Map<string, Record<string, unknown>[]>(Object.keys(TEMPLATE_SECTIONS).map((section) => [section, []]));
  /** Parents of nested sections by name → id (the WireGuard tunnels an appliance has: `parents.set('wg_peers', …)`). */
  readonly parents = new Map<string, Map<string, string>>();
  /** Every apply this stand-in ran (a revision applied twice would show twice). */
  applies = 0;

  constructor(private readonly refuse: (document: SectionObjects) => string | null = () => null) {}

  async apply(document: SectionObjects, previous: SectionObjects | null): Promise<ApplyOutcome> {
    this.applies += 1;
    const refusal = this.refuse(document);
    if (refusal) return { outcome: 'failed', reason: refusal };
    const operations = planChanges(document, previous, (section) => this.objects.get(section) ?? [], (section) => this.parents.get(section) ?? new Map());
    const created = new Map<string, string>();
    for (const operation of operations) {
      const section = sectionOfPath(operation.path)!;
      const spec = sectionSpec(section)!;
      const list = this.objects.get(section)!;
      const id = operation.path.split('/').at(-1);
      if (operation.op === 'update' && isRuleReorder(operation.path)) {
        // The block's reorder: every rule's new place, rules created just now named by their key.
        const ids = (operation.body.rule_ids as unknown[]).map((entry) => (typeof entry === 'string' ? entry : created.get((entry as { $ref: string }).$ref)));
        list.sort((a, b) => ids.indexOf(String(a.id)) - ids.indexOf(String(b.id)));
      } else if (operation.op === 'create') {
        // Kept as the appliance reads it back: the template object a body was made from, under its parent's id.
        const object = { ...stored(spec, operation.object ?? operation.body, randomUUID()), ...parentOf(spec, operation.path) };
        if (operation.key) created.set(operation.key, String(object.id));
        list.push(object);
      } else if (operation.op === 'update' && spec.singleton) list.splice(0, 1, { ...list[0], ...stored(spec, operation.body) });
      else if (operation.op === 'update') list.splice(list.findIndex((o) => o.id === id), 1, { ...stored(spec, operation.object ?? operation.body, id), ...parentOf(spec, operation.path) });
      else list.splice(list.findIndex((o) => o.id === id), 1);
      this.objects.set(section, list);
    }
    return { outcome: 'applied', reason: null };
  }

  async health(): Promise<Health> {
    return { status: 'ok', failing_assertions: [] };
  }

  async drift(applied: SectionObjects): Promise<DriftEntry[]> {
    return driftOf(applied, (section) => this.objects.get(section) ?? []);
  }
}

/** An object as the appliance keeps it: a secret is never read back, only whether one is stored. */
function stored(spec: SectionSpec, body: Record<string, unknown>, id?: string): Record<string, unknown> {
  const object: Record<string, unknown> = id === undefined ? {} : { id };
  for (const [field, value] of Object.entries(body)) {
    const shown = spec.secrets?.[field];
    if (shown) object[shown] = typeof value === 'string' && value !== '';
    else object[field] = value;
  }
  return object;
}

/** A nested object's parent id, from the path it was written at (`/api/v1/vpn/wg/<tunnel id>/peers…` → `tunnel_id`). */
function parentOf(spec: SectionSpec, path: string): Record<string, unknown> {
  if (!spec.parent) return {};
  return { [`${spec.parent.field}_id`]: path.slice(spec.path.length + 1).split('/')[0] };
}
