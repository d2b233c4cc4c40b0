/**
 * The one place that turns values into Unbound configuration text. Unbound's configuration lexer has no escape
 * sequences: a double-quoted string ends at the next `"`, a single-quoted one at the next `'`, whatever precedes
 * it. So values are never escaped into a quoted string; each one either matches the grammar of its slot or the
 * renderer refuses it (RenderRefusal). TXT data is the exception: its characters are written as DNS
 * presentation-format `\DDD` escapes, which Unbound decodes itself, so any text renders as one inert string.
 */
import { RenderRefusal } from '../refusal.js';

/** Characters that may appear inside a double-quoted Unbound string: printable ASCII except quotes, backslash and #. */
const QUOTABLE = /^[\x20-\x7e]*$/;
const NOT_QUOTABLE = /["'\\#]/;

/** A value as a double-quoted Unbound string (`"value"`); refuses anything that could end the string. */
export function unboundString(value: string, field: string): string {
  if (!QUOTABLE.test(value) || NOT_QUOTABLE.test(value)) throw new RenderRefusal(field, 'contains a character that cannot appear in an Unbound string');
  return `"${value}"`;
}

/** Unquoted tokens: addresses, CIDRs, `addr@port#name`, numbers and sizes. */
const TOKEN = /^[A-Za-z0-9.:@#/_%-]+$/;

/** A value written unquoted after a keyword; refuses anything with spaces, quotes or other syntax. */
export function unboundToken(value: string | number, field: string): string {
  const text = String(value);
  if (!TOKEN.test(text)) throw new RenderRefusal(field, 'is not a single Unbound token');
  return text;
}

/** Host labels joined by dots (underscores allowed, as in SRV-style names). */
const NAME = /^(?:[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?\.)*[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?\.?$/;

/** A DNS name in absolute form (`name.`); refuses anything that is not a plain host name. */
export function unboundName(value: string, field: string): string {
  if (value === '.') return '.';
  if (value.length > 254 || !NAME.test(value)) throw new RenderRefusal(field, 'is not a DNS name');
  return value.endsWith('.') ? value : `${value}.`;
}

/** Bytes written literally inside a TXT character-string; everything else becomes `\DDD`. */
const TXT_LITERAL = /[A-Za-z0-9 .,:=+\-_/@!?%&*~^|]/;

/** One TXT character-string (at most 255 bytes) in presentation format: `"..."` with `\DDD` escapes. */
function txtCharacterString(bytes: Buffer): string {
  let text = '';
  for (const byte of bytes) {
    const char = String.fromCharCode(byte);
    text += byte < 0x80 && TXT_LITERAL.test(char) ? char : `\\${String(byte).padStart(3, '0')}`;
  }
  return `"${text}"`;
}

/** The RDATA of a TXT record: the UTF-8 bytes split into 255-byte character-strings, each escaped. */
export function unboundTxtData(text: string): string {
  const bytes = Buffer.from(text, 'utf8');
  const parts: string[] = [];
  for (let offset = 0; offset < bytes.length; offset += 255) parts.push(txtCharacterString(bytes.subarray(offset, offset + 255)));
  return parts.length ? parts.join(' ') : '""';
}

/**
 * A `local-data` record as a single-quoted Unbound string, used when the RDATA carries its own double quotes
 * (TXT). The record text is built only from checked names and escaped TXT data, so it never holds a `'`.
 */
export function unboundSingleQuoted(value: string, field: string): string {
  if (!QUOTABLE.test(value) || /['#]/.test(value)) throw new RenderRefusal(field, 'contains a character that cannot appear in an Unbound string');
  return `'${value}'`;
}
