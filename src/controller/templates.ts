import { badRequest, conflict, notFound } from '../core/errors.js';
import type { Pool } from './database.js';
import { selectPage, type Page } from './paging.js';
import { objectName, sectionSpec, TEMPLATE_SECTIONS, type TemplateSection } from '../agent/section-catalogue.js';
import type { RulePlacement } from '../agent/rule-order.js';

export { TEMPLATE_SECTIONS, type TemplateSection } from '../agent/section-catalogue.js';
export type Sections = Partial<Record<TemplateSection, Record<string, unknown>[]>>;

const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]{0,63})\}/g;
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const SECRET_REFERENCE = /^\$\{secret:([A-Za-z_][A-Za-z0-9_]{0,63})\}$/;

const MAC = /^([0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}$/;
const WIREGUARD_KEY = /^[A-Za-z0-9+/]{43}=$/;

/** Checks of a key field's value beyond "a non-empty string" (a value holding a variable is checked once rendered, by the appliance). */
const KEY_FORMATS: Partial<Record<TemplateSection, Record<string, { test: (value: string) => boolean; says: string }>>> = {
  dhcp_reservations: { mac_address: { test: (value) => MAC.test(value), says: 'a MAC address (aa:bb:cc:dd:ee:ff): a reservation is named by its client' } },
  wg_peers: { public_key: { test: (value) => WIREGUARD_KEY.test(value), says: 'a WireGuard public key (44 characters of base64): a peer is named by its key' } },
};

/**
 * A template's sections as sent: known sections, arrays of objects, each named once by its key fields; a settings
 * section at most one object; a secret field only as `${secret:name}` (never plain text in the controller's
 * database); and, when the rules are placed as a block, no rule priority (the block's order is the template's).
 */
export function checkSections(value: unknown, field = 'body.sections', rulePlacement: RulePlacement = 'priority'): Sections {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw badRequest(`${field} must be an object`);
  for (const [section, objects] of Object.entries(value)) {
    const spec = sectionSpec(section);
    if (!spec) throw badRequest(`${field}.${section}: not a section a template can own (${Object.keys(TEMPLATE_SECTIONS).join(', ')})`);
    if (!Array.isArray(objects)) throw badRequest(`${field}.${section} must be an array`);
    if (spec.singleton && objects.length > 1) throw badRequest(`${field}.${section}: a settings section is one object (the fields the template owns), not ${objects.length}`);
    const seen = new Set<string>();
    objects.forEach((object, index) => {
      const at = `${field}.${section}.${index}`;
      if (typeof object !== 'object' || object === null || Array.isArray(object)) throw badRequest(`${at} must be an object`);
      const fields = object as Record<string, unknown>;
      for (const key of spec.key) {
        const part = fields[key];
        if (typeof part !== 'string' || part === '') throw badRequest(`${at}.${key} must be a non-empty string (it names the object on each appliance)`);
        const format = KEY_FORMATS[section as TemplateSection]?.[key];
        if (format && !part.includes('${') && !format.test(part)) throw badRequest(`${at}.${key} must be ${format.says}`);
      }
      for (const secret of Object.keys(spec.secrets ?? {})) {
        if (fields[secret] !== undefined && (typeof fields[secret] !== 'string' || !SECRET_REFERENCE.test(fields[secret]))) {
          throw badRequest(`${at}.${secret} is a secret: write it as \${secret:name} (sealed for each appliance, PUT /api/v1/secrets/{name}), never as text`);
        }
      }
      const readOnly = spec.readOnly?.find((name) => fields[name] !== undefined);
      if (readOnly) throw badRequest(`${at}.${readOnly} is set by the appliance itself; a template cannot set it`);
      if (section === 'rules' && rulePlacement !== 'priority' && fields.priority !== undefined) {
        throw badRequest(`${at}.priority: the template places its rules ${rulePlacement === 'first' ? 'before' : 'after'} the appliance's own (rule_placement ${rulePlacement}), in the order listed; leave priority out`);
      }
      const name = objectName(section, fields);
      if (seen.has(name)) throw badRequest(`${at}: "${name}" appears twice`);
      seen.add(name);
    });
  }
  return value as Sections;
}

export function checkVariables(value: unknown, field = 'body.variables'): Record<string, string> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw badRequest(`${field} must be an object of strings`);
  for (const [name, text] of Object.entries(value)) {
    if (!VARIABLE_NAME.test(name)) throw badRequest(`${field}.${name}: a variable name is a letter or _ then letters, digits or _`);
    if (typeof text !== 'string' || text.length > 4096) throw badRequest(`${field}.${name} must be a string of at most 4096 characters`);
  }
  return value as Record<string, string>;
}

/**
 * A template's sections for one appliance: `${name}` in any string value is replaced by that appliance's variable.
 * Only whole string values are substituted, as data; the appliance validates each field as it validates any write.
 */
export function renderSections(sections: Sections, variables: Record<string, string>, applianceName: string, secrets?: Record<string, string>): Sections {
  const render = (value: unknown): unknown => {
    if (typeof value === 'string') {
      // A secret is a whole value: the appliance's sealed copy goes in, which only that appliance can open.
      const secret = SECRET_REFERENCE.exec(value);
      if (secret && secrets) {
        if (!Object.hasOwn(secrets, secret[1])) throw badRequest(`appliance "${applianceName}" has no secret "${secret[1]}" the template uses (PUT /api/v1/appliances/{id}/secrets/${secret[1]})`);
        return secrets[secret[1]];
      }
      if (secrets && value.includes('${secret:')) throw badRequest(`a template's \${secret:name} must be a whole value, not part of "${value.slice(0, 80)}"`);
      return value.replace(VARIABLE, (_, name: string) => {
        if (!Object.hasOwn(variables, name)) throw badRequest(`appliance "${applianceName}" has no variable "${name}" the template uses`);
        return variables[name];
      });
    }
    if (Array.isArray(value)) return value.map(render);
    if (typeof value === 'object' && value !== null) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, render(v)]));
    return value;
  };
  return render(sections) as Sections;
}

export interface TemplateRecord {
  id: string;
  name: string;
  sections: Sections;
  drift_policy: 'overwrite' | 'adopt';
  rule_placement: RulePlacement;
  created_at: string;
  updated_at: string;
}

const toRecord = (row: TemplateRecord): TemplateRecord => ({
  ...row,
  created_at: new Date(row.created_at).toISOString(),
  updated_at: new Date(row.updated_at).toISOString(),
});

export class Templates {
  constructor(private readonly pool: Pool) {}

  /** A page of the templates by name (unique: stable), with the total. */
  async list(page: Page): Promise<{ total: number; items: TemplateRecord[] }> {
    const { total, rows } = await selectPage<TemplateRecord & Record<string, unknown>>(this.pool, 'SELECT * FROM templates', [], 'name', page);
    return { total, items: rows.map(({ total_rows: _, ...row }) => toRecord(row as TemplateRecord)) };
  }

  async get(id: string): Promise<TemplateRecord> {
    const row = (await this.pool.query<TemplateRecord>('SELECT * FROM templates WHERE id::text = $1', [id])).rows[0];
    if (!row) throw notFound(`template ${id} not found`);
    return toRecord(row);
  }

  async create(name: string, sections: Sections, driftPolicy: TemplateRecord['drift_policy'], rulePlacement: RulePlacement = 'priority'): Promise<TemplateRecord> {
    const row = await this.pool.query<TemplateRecord>(
      'INSERT INTO templates (name, sections, drift_policy, rule_placement) VALUES ($1, $2, $3, $4) ON CONFLICT (name) DO NOTHING RETURNING *',
      [name, JSON.stringify(sections), driftPolicy, rulePlacement],
    );
    if (!row.rowCount) throw conflict(`template "${name}" already exists`);
    return toRecord(row.rows[0]);
  }

  async update(id: string, sections: Sections, driftPolicy?: TemplateRecord['drift_policy'], rulePlacement?: RulePlacement): Promise<TemplateRecord> {
    const row = await this.pool.query<TemplateRecord>(
      'UPDATE templates SET sections = $2, drift_policy = coalesce($3, drift_policy), rule_placement = coalesce($4, rule_placement), updated_at = now() WHERE id::text = $1 RETURNING *',
      [id, JSON.stringify(sections), driftPolicy ?? null, rulePlacement ?? null],
    );
    if (!row.rowCount) throw notFound(`template ${id} not found`);
    return toRecord(row.rows[0]);
  }
}
