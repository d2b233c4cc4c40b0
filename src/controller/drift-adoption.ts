import { isDeepStrictEqual } from 'node:util';
import { objectName } from '../agent/sections.js';
import type { DriftEntry } from '../agent/protocol.js';
import { recordAudit } from './audit.js';
import { CHANNELS } from './channels.js';
import { inTransaction, type Pool } from './database.js';
import type { RevisionDocument } from './rollouts.js';
import { renderSections, type Sections } from './templates.js';

const WHOLE_VARIABLE = /^\$\{([A-Za-z_][A-Za-z0-9_]{0,63})\}$/;
const ANY_VARIABLE = /\$\{[^}]*\}/;

const usesVariables = (value: unknown): boolean => ANY_VARIABLE.test(JSON.stringify(value) ?? '');

/**
 * What a local value says about a template value that uses variables: a string that is exactly `${name}` binds
 * that variable to the local string; every other part must already be what the template renders to. Null when
 * the local edit cannot be expressed through the appliance's variables.
 */
export function bindVariables(template: unknown, local: unknown, variables: Record<string, string>): Record<string, string> | null {
  const bound: Record<string, string> = {};
  const walk = (t: unknown, l: unknown): boolean => {
    if (typeof t === 'string') {
      const whole = WHOLE_VARIABLE.exec(t);
      if (whole) {
        if (typeof l !== 'string' || (Object.hasOwn(bound, whole[1]) && bound[whole[1]] !== l)) return false;
        bound[whole[1]] = l;
        return true;
      }
      return !usesVariables(t) && t === l;
    }
    if (Array.isArray(t)) return Array.isArray(l) && t.length === l.length && t.every((item, index) => walk(item, l[index]));
    if (typeof t === 'object' && t !== null) {
      if (typeof l !== 'object' || l === null || Array.isArray(l)) return false;
      const lo = l as Record<string, unknown>;
      return Object.keys(t).length === Object.keys(lo).length && Object.entries(t).every(([key, value]) => walk(value, lo[key]));
    }
    return isDeepStrictEqual(t, l);
  };
  return walk(template, local) ? { ...variables, ...bound } : null;
}

interface Outcome {
  template: string;
  section: string;
  name: string;
  adopted: boolean;
  how: string;
}

/**
 * The `adopt` drift policy: a local edit an appliance reports on an object owned by a template with that policy
 * becomes the template's (a field without variables takes the local value; a field that is exactly `${name}`
 * takes it as that appliance's variable), an object deleted locally leaves the template, and the appliance gets
 * a new revision saying what it already runs (applied without a change), so its drift clears. Other appliances
 * get the adopted template at their next rollout. Templates with the `overwrite` policy keep the drift reported
 * until the next rollout puts the template's values back. Considered at every status that carries drift, so an
 * edit made while a revision was in flight is adopted once the appliance is in sync.
 */
export async function adoptDrift(pool: Pool, applianceId: string, drift: readonly DriftEntry[], fresh: boolean): Promise<Outcome[]> {
  if (drift.length === 0) return [];
  // The common case, cheaply: no template adopts, so nothing is locked.
  if (!(await pool.query("SELECT 1 FROM templates WHERE drift_policy = 'adopt' LIMIT 1")).rowCount) return [];
  return inTransaction(pool, async (client) => {
    const appliance = (await client.query<{ name: string; variables: Record<string, string>; desired_revision: number; applied_revision: number; in_flight: boolean; document: RevisionDocument | null; last_number: number | null }>(
      `SELECT a.name, a.variables, a.desired_revision, a.applied_revision, r.document,
              (a.pulled_revision > a.applied_revision AND a.pulled_revision IS DISTINCT FROM (a.last_outcome->>'revision')::int) AS in_flight,
              (SELECT max(number) FROM revisions WHERE appliance_id = a.id) AS last_number
         FROM appliances a LEFT JOIN revisions r ON r.appliance_id = a.id AND r.number = a.desired_revision
        WHERE a.id = $1 AND a.revoked_at IS NULL FOR UPDATE OF a`,
      [applianceId],
    )).rows[0];
    // A revision in flight first: the drift is considered again at the next status once the appliance is in sync.
    // In flight: the desired revision is not applied, or the agent's last pull handed it a number it has neither
    // applied nor reported (a halt set its desired revision back to what it runs while it applies the halted
    // rollout's: it looks in sync, but a revision adopted now would follow the report and undo that apply).
    if (!appliance?.document || appliance.desired_revision !== appliance.applied_revision || appliance.in_flight) return [];
    const templates = (await client.query<{ id: string; name: string; sections: Sections }>("SELECT id, name, sections FROM templates WHERE drift_policy = 'adopt' ORDER BY name FOR UPDATE")).rows;
    if (templates.length === 0) return [];
    const document = structuredClone(appliance.document);
    let variables = { ...appliance.variables };
    const changedTemplates = new Set<string>();
    const outcomes: Outcome[] = [];
    for (const entry of drift) {
      for (const template of templates) {
        const objects = template.sections[entry.section as keyof Sections];
        if (!objects) continue;
        let rendered: Record<string, unknown>[];
        try {
          rendered = renderSections({ [entry.section]: objects }, variables, appliance.name)[entry.section as keyof Sections] ?? [];
        } catch {
          continue;
        }
        const index = rendered.findIndex((object) => objectName(entry.section, object) === entry.name);
        if (index < 0) continue;
        const owned = document.sections[entry.section as keyof Sections] ?? [];
        const inDocument = owned.findIndex((object) => objectName(entry.section, object) === entry.name);
        const outcome = { template: template.name, section: entry.section, name: entry.name };
        if (entry.kind === 'moved') {
          // The block's order is the template's whole list, not a field an appliance's edit could set for all.
          outcomes.push({ ...outcome, adopted: false, how: 'the rules were reordered locally: rule order is not adopted (the next rollout restores the block)' });
          continue;
        }
        if (entry.kind === 'missing') {
          objects.splice(index, 1);
          if (inDocument >= 0) owned.splice(inDocument, 1);
          outcomes.push({ ...outcome, adopted: true, how: 'deleted locally: removed from the template' });
        } else {
          const values = entry.values ?? {};
          const fields = entry.fields.filter((field) => Object.hasOwn(values, field));
          let next = variables;
          const unsent = entry.fields.filter((field) => !Object.hasOwn(values, field));
          const refusal = unsent.length > 0 ? `the appliance does not send the local value of ${unsent.join(', ')} (a secret is never read back)` : fields.map((field) => {
            const current = objects[index][field];
            if (!usesVariables(current)) return null;
            const bound = bindVariables(current, values[field], next);
            if (!bound) return `${field} uses variables in a way a local value cannot set`;
            next = bound;
            return null;
          }).find((reason) => reason !== null);
          if (refusal) {
            outcomes.push({ ...outcome, adopted: false, how: refusal });
            continue;
          }
          for (const field of fields) {
            if (!usesVariables(objects[index][field])) objects[index][field] = values[field];
            if (inDocument >= 0) owned[inDocument][field] = values[field];
          }
          variables = next;
          outcomes.push({ ...outcome, adopted: true, how: `fields ${fields.join(', ')} taken from the appliance` });
        }
        document.sections[entry.section as keyof Sections] = owned;
        changedTemplates.add(template.id);
        break;
      }
    }
    for (const template of templates.filter((t) => changedTemplates.has(t.id))) {
      await client.query('UPDATE templates SET sections = $2, updated_at = now() WHERE id = $1', [template.id, JSON.stringify(template.sections)]);
    }
    // A refusal is audited when the drift is new, not again at every status that repeats it.
    for (const outcome of outcomes.filter((o) => o.adopted || fresh)) {
      await recordAudit(client, { actor: 'controller', applianceId, action: outcome.adopted ? 'drift.adopted' : 'drift.not_adopted', detail: { ...outcome } });
    }
    if (!outcomes.some((outcome) => outcome.adopted)) return outcomes;
    // What the appliance runs now, as a revision: applied without a change, after which its drift is gone.
    const number = (appliance.last_number ?? 0) + 1;
    await client.query('INSERT INTO revisions (appliance_id, number, document) VALUES ($1, $2, $3)', [applianceId, number, JSON.stringify(document)]);
    await client.query('UPDATE appliances SET desired_revision = $2, variables = $3 WHERE id = $1', [applianceId, number, JSON.stringify(variables)]);
    await client.query('SELECT pg_notify($1, $2)', [CHANNELS.nudge, JSON.stringify({ appliance: applianceId })]);
    return outcomes;
  });
}
