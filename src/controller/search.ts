import { TEMPLATE_SECTIONS } from '../agent/sections.js';
import type { Pool } from './database.js';
import { selectPage, type Page } from './paging.js';
import { APPLIANCE_COLUMNS, applianceOf } from './views.js';

export interface SearchQuery {
  /** Text an owned object's string value contains (anywhere in the object: entries, addresses, names...). */
  contains?: string;
  /** Only objects of this section (aliases, rules, ...). */
  section?: string;
  /** Appliances that run this release (the version they reported). */
  version?: string;
}

/** Each section's key fields, so a match names its object as the agent does (key values joined with /; a settings section by its own name). */
const KEYS = JSON.stringify(Object.fromEntries(Object.entries(TEMPLATE_SECTIONS).map(([section, spec]) => [section, spec.key])));

/**
 * Fleet search over the stored state: the documents of each appliance's desired revision and of the revision it
 * reported applied, and the version it reported. "Which appliances have an alias containing 203.0.113.7" is
 * `?section=aliases&contains=203.0.113.7`; "which run release X" is `?version=X`. Every value is a parameter.
 */
export async function searchFleet(pool: Pool, query: SearchQuery, page: Page) {
  const { total, rows } = await selectPage(pool,
    `SELECT * FROM (
       SELECT ${APPLIANCE_COLUMNS},
              (SELECT coalesce(jsonb_agg(DISTINCT jsonb_build_object('state', d.state, 'section', s.key, 'name', coalesce((SELECT string_agg(o ->> k.field, '/' ORDER BY k.n) FROM jsonb_array_elements_text($4::jsonb -> s.key) WITH ORDINALITY AS k(field, n)), s.key))), '[]')
                 FROM (VALUES ('desired', rd.document), ('applied', ra.document)) AS d(state, document),
                      jsonb_each(coalesce(d.document -> 'sections', '{}')) AS s,
                      jsonb_array_elements(s.value) AS o
                WHERE $1::text IS NOT NULL AND ($2::text IS NULL OR s.key = $2)
                  AND EXISTS (SELECT 1 FROM jsonb_path_query(o, 'strict $.**') AS v
                               WHERE jsonb_typeof(v) = 'string' AND strpos(v #>> '{}', $1) > 0)) AS matches
         FROM appliances a
         LEFT JOIN revisions rd ON rd.appliance_id = a.id AND rd.number = a.desired_revision
         LEFT JOIN revisions ra ON ra.appliance_id = a.id AND ra.number = a.applied_revision
        WHERE a.revoked_at IS NULL AND ($3::text IS NULL OR a.version = $3)
     ) found
     WHERE $1::text IS NULL OR jsonb_array_length(found.matches) > 0`,
    [query.contains ?? null, query.section ?? null, query.version ?? null, KEYS], 'enrolled_at, id', page,
  );
  return { total, appliances: rows.map((row) => ({ ...applianceOf(row), matches: row.matches })) };
}
