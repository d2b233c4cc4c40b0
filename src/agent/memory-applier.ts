import { randomUUID } from 'node:crypto';
import type { Applier, ApplyOutcome } from './agent.js';
import type { DriftEntry, Health } from './protocol.js';
import { driftOf, planChanges, sectionOfPath, TEMPLATE_SECTIONS } from './sections.js';
import type { SectionObjects } from './state.js';

/**
 * A stand-in for an appliance's configuration, in memory: the light agents of the scale tests and the bench run
 * the same agent code against it. It applies a revision's change set all or none; `refuse` lets a test make it
 * refuse a document (as an appliance's assertion would).
 */
export class MemoryApplier implements Applier {
  readonly objects = new Map<string, Record<string, unknown>[]>(Object.keys(TEMPLATE_SECTIONS).map((section) => [section, []]));
  /** Every apply this stand-in ran (a revision applied twice would show twice). */
  applies = 0;

  constructor(private readonly refuse: (document: SectionObjects) => string | null = () => null) {}

  async apply(document: SectionObjects, previous: SectionObjects | null): Promise<ApplyOutcome> {
    this.applies += 1;
    const refusal = this.refuse(document);
    if (refusal) return { outcome: 'failed', reason: refusal };
    const operations = planChanges(document, previous, (section) => this.objects.get(section) ?? []);
    for (const operation of operations) {
      const section = sectionOfPath(operation.path)!;
      const list = this.objects.get(section)!;
      const id = operation.path.split('/').at(-1);
      if (operation.op === 'create') list.push({ ...operation.body, id: randomUUID() });
      else if (operation.op === 'update') list.splice(list.findIndex((o) => o.id === id), 1, { ...operation.body, id });
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
