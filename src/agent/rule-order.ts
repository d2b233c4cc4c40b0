import type { DriftEntry } from './protocol.js';
import { objectName, TEMPLATE_SECTIONS } from './section-catalogue.js';
import type { SectionObjects } from './state.js';

/**
 * Where a template's rules go among the appliance's own (docs/fleet.md, "Rule order"):
 * - `priority`: each rule at the priority the template gives it (or, without one, where the appliance puts a new
 *   rule: last); a local change of a given priority is drift of that field.
 * - `first` / `last`: the owned rules are one block, in the template's order, before (or after) every rule the
 *   templates do not own. The block is kept by `PUT /rules/reorder` inside the revision's change set, which makes
 *   every rule's priority its position (the appliance's own rules keep their order among themselves). A local
 *   reorder that breaks the block, or a local rule put inside or beyond it, is drift (`kind: moved`).
 */
export type RulePlacement = 'priority' | 'first' | 'last';

const RULES = TEMPLATE_SECTIONS.rules.path;
const REORDER = `${RULES}/reorder`;

type Rule = Record<string, unknown>;
type Operation = { op: 'create' | 'update' | 'delete'; path: string; key?: string; body?: Record<string, unknown> };

const blockPlaced = (placement: SectionObjects['rule_placement']): placement is 'first' | 'last' => placement === 'first' || placement === 'last';

/** The order the block wants: the appliance's own rules in their order, the owned ones (ids, or `$ref`s of rules created in this change set) before or after. */
function wantedOrder(placement: 'first' | 'last', own: unknown[], block: unknown[]): unknown[] {
  return placement === 'first' ? [...block, ...own] : [...own, ...block];
}

/**
 * The reorder that ends the revision's change set when its rules are a block: null when the rules will already be
 * in that order. Creates of rules get a key (`$ref` in the reorder). `local` is the appliance's rules in
 * evaluation order (as `GET /rules` answers); a new rule goes last on the appliance, as a create without priority does.
 */
export function placeRules(document: SectionObjects, local: readonly Rule[], operations: Operation[]): Operation | null {
  const owned = document.sections.rules;
  if (!blockPlaced(document.rule_placement) || !owned) return null;
  const deleted = new Set(operations.filter((o) => o.op === 'delete' && o.path.startsWith(`${RULES}/`)).map((o) => o.path.slice(RULES.length + 1)));
  const names = new Set(owned.map((rule) => objectName('rules', rule)));
  const kept = local.filter((rule) => !deleted.has(String(rule.id)));
  const byName = new Map(kept.map((rule) => [objectName('rules', rule), rule]));
  const creates = operations.filter((o) => o.op === 'create' && o.path === RULES);
  creates.forEach((operation, index) => {
    operation.key = `fleet-rule-${index}`;
  });
  const createdKey = new Map(creates.map((operation) => [objectName('rules', operation.body ?? {}), operation.key!]));
  const block = owned.map((rule) => {
    const name = objectName('rules', rule);
    const existing = byName.get(name);
    return existing ? String(existing.id) : { $ref: createdKey.get(name) };
  });
  const own = kept.filter((rule) => !names.has(objectName('rules', rule))).map((rule) => String(rule.id));
  const wanted = wantedOrder(document.rule_placement, own, block);
  const after = [...kept.map((rule) => String(rule.id)), ...creates.map((operation) => ({ $ref: operation.key }))];
  if (JSON.stringify(after) === JSON.stringify(wanted)) return null;
  return { op: 'update', path: REORDER, body: { rule_ids: wanted } };
}

/**
 * Drift of the block: the owned rules present locally are not, in the template's order, the first (or last) rules
 * of the evaluation order. Named after the first owned rule out of its place.
 */
export function ruleOrderDrift(applied: SectionObjects, local: readonly Rule[]): DriftEntry | null {
  const owned = applied.sections.rules;
  if (!blockPlaced(applied.rule_placement) || !owned) return null;
  const present = new Set(local.map((rule) => objectName('rules', rule)));
  const expected = owned.map((rule) => objectName('rules', rule)).filter((name) => present.has(name));
  const names = local.map((rule) => objectName('rules', rule));
  const actual = applied.rule_placement === 'first' ? names.slice(0, expected.length) : names.slice(names.length - expected.length);
  const index = expected.findIndex((name, i) => actual[i] !== name);
  if (index < 0) return null;
  return { section: 'rules', name: expected[index], kind: 'moved', fields: [] };
}

/** Whether an operation is the block's reorder (not a write of one rule). */
export const isRuleReorder = (path: string): boolean => path === REORDER;
