import { badRequest, conflict, notFound } from '../core/errors.js';
import type { Pool } from './database.js';
import { selectPage, type Page } from './paging.js';
import { objectName, TEMPLATE_SECTIONS, type TemplateSection } from '../agent/sections.js';

export { TEMPLATE_SECTIONS, type TemplateSection } from '../agent/sections.js';
export type Sections = Partial<Record<TemplateSection, Record<string, unknown>[]>>;

const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]{0,63})\}/g;
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const SECRET_REFERENCE = /^\$\{secret:([A-Za-z_][A-Za-z0-9_]{0,63})\}$/;

/** A template's sections as sent: known sections, arrays of objects, each named once. */
export function checkSections(value: unknown, field = 'body.sections'): Sections {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw badRequest(`${field} must be an object`);
  for (const [section, objects] of Object.entries(value)) {
    if (!(section in TEMPLATE_SECTIONS)) throw badRequest(`${field}.${section}: not a section a template can own (${Object.keys(TEMPLATE_SECTIONS).join(', ')})`);
    if (!Array.isArray(objects)) throw badRequest(`${field}.${section} must be an array`);
    const keys = TEMPLATE_SECTIONS[section as TemplateSection].key;
    const seen = new Set<string>();
    objects.forEach((object, index) => {
      if (typeof object !== 'object' || object === null || Array.isArray(object)) throw badRequest(`${field}.${section}.${index} must be an object`);
      for (const key of keys) {
        const part = (object as Record<string, unknown>)[key];
        if (typeof part !== 'string' || part === '') throw badRequest(`${field}.${section}.${index}.${key} must be a non-empty string (it names the object on each appliance)`);
      }
      const name = objectName(section, object as Record<string, unknown>);
      if (seen.has(name)) throw badRequest(`${field}.${section}.${index}: "${name}" appears twice`);
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

  async create(name: string, sections: Sections, driftPolicy: TemplateRecord['drift_policy']): Promise<TemplateRecord> {
    const row = await this.pool.query<TemplateRecord>(
      'INSERT INTO templates (name, sections, drift_policy) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING RETURNING *',
      [name, JSON.stringify(sections), driftPolicy],
    );
    if (!row.rowCount) throw conflict(`template "${name}" already exists`);
    return toRecord(row.rows[0]);
  }

  async update(id: string, sections: Sections, driftPolicy?: TemplateRecord['drift_policy']): Promise<TemplateRecord> {
    const row = await this.pool.query<TemplateRecord>(
      'UPDATE templates SET sections = $2, drift_policy = coalesce($3, drift_policy), updated_at = now() WHERE id::text = $1 RETURNING *',
      [id, JSON.stringify(sections), driftPolicy ?? null],
    );
    if (!row.rowCount) throw notFound(`template ${id} not found`);
    return toRecord(row.rows[0]);
  }
}
