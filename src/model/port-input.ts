/**
 * The one request syntax of a port field: `443`, `"443"`, `"8000-8080"` (also `"8000:8080"`, pf's spelling) or
 * `{"start": 8000, "end": 8080}`; null (or `""`) for none. Every port field of the API takes it through
 * `PortInput` and `parsePortInput`, so the forms and the refusals are the same everywhere.
 */
import { Type } from 'typebox';
import { badRequest } from '../core/errors.js';
import type { PortRange } from '../compile/firewall-types.js';

export const PORT_MIN = 0;
export const PORT_MAX = 65535;

export const PortNumber = () => Type.Integer({ minimum: PORT_MIN, maximum: PORT_MAX });
/** The stored (and answered) shape of a port or range: a single port has start = end. */
export const PortRangeObject = () => Type.Object({ start: PortNumber(), end: PortNumber() }, { additionalProperties: false });

const FORMS = '443, "443", "8000-8080" or {"start": 8000, "end": 8080}';

/**
 * The request schema of a port field. The text branch is only bounded in length: its syntax is checked by
 * parsePortInput, whose messages quote what was sent (a pattern failure would only print the pattern).
 */
export const PortInput = (options: Record<string, unknown> = {}) =>
  Type.Union([
    PortNumber(),
    Type.String({ maxLength: 16, description: 'a port "443" or a range "8000-8080" ("8000:8080" too); "" means none', examples: ['443', '8000-8080'] }),
    PortRangeObject(),
    Type.Null(),
  ], { description: `a port or a range: ${FORMS}; null for none`, ...options });

const TEXT = /^(\d{1,5})(?:\s*[-:]\s*(\d{1,5}))?$/;

/**
 * A port field's value as the client sent it → the canonical range (null: no port). `field` is the path the
 * client used (e.g. `body.rule_match.dst_port`), and every refusal names it and quotes the value.
 */
export function parsePortInput(value: unknown, field: string): PortRange | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') return checked(value, value, value, field);
  if (typeof value === 'string') {
    const text = value.trim();
    if (text === '') return null;
    const match = TEXT.exec(text);
    if (!match) throw badRequest(`${field}: ${JSON.stringify(value)} is not a port or a port range (write ${FORMS})`);
    const start = Number(match[1]);
    return checked(value, start, match[2] === undefined ? start : Number(match[2]), field);
  }
  if (typeof value === 'object' && !Array.isArray(value)) {
    const { start, end } = value as Record<string, unknown>;
    if (typeof start === 'number' && typeof end === 'number') return checked(value, start, end, field);
  }
  throw badRequest(`${field}: ${JSON.stringify(value)} is not a port or a port range (write ${FORMS})`);
}

function checked(sent: unknown, start: number, end: number, field: string): PortRange {
  const quoted = JSON.stringify(sent);
  const range = start !== end || typeof sent === 'object' || (typeof sent === 'string' && /[-:]/.test(sent));
  const what = range ? 'port range' : 'port';
  if (![start, end].every((port) => Number.isInteger(port) && port >= PORT_MIN && port <= PORT_MAX)) {
    throw badRequest(`${field}: ${quoted} is not a valid ${what} (ports are whole numbers ${PORT_MIN}-${PORT_MAX})`);
  }
  if (start > end) throw badRequest(`${field}: ${quoted} is not a valid port range (start > end)`);
  return { start, end };
}
