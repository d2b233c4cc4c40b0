import { stripTerminalControls } from './grammar.js';

/**
 * The writers of free text into rendered files (the grammars the values are held to are in grammar.ts).
 *
 * Rulesets: the only way free text (descriptions, labels, schedule names) enters a rendered ruleset. Each format has one
 * function; every comment and every quoted string built from a request value passes through it.
 *
 * The rendered form keeps ordinary text readable and percent-encodes (UTF-8 bytes, `%XX`) everything that
 * could end a comment or a string, join lines, or confuse a reader of the file:
 * - pf: pfctl's lexer joins a line ending in `\` with the next one, also inside a `#` comment (so a
 *   description ending in `\` would swallow the next rule), ends a quoted string at `"` or `'`, and ends a
 *   comment at LF. So: no control characters, no `\`, no quotes.
 * - nftables: a quoted string cannot contain `"` at all (the scanner has no escapes), and a `#` comment ends
 *   at LF. So: no control characters and no `"`; `\` is encoded too, to keep one rule for both formats.
 * `%` itself is encoded so the form stays reversible. Letters, digits, punctuation and symbols of any
 * script stay as they are (UTF-8 continuation bytes are never ASCII, so they cannot form a line break);
 * format characters (e.g. bidirectional overrides), line/paragraph separators and non-ASCII spaces are
 * encoded.
 */

const ASCII_KEPT = /[\x20-\x7e]/;
const ASCII_ENCODED = new Set(['"', "'", '\\', '%', '`']);
const NON_ASCII_KEPT = /[\p{L}\p{M}\p{N}\p{P}\p{S}]/u;

function encodeCharacter(character: string): string {
  return [...Buffer.from(character, 'utf8')].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join('');
}

function safeText(text: string): string {
  let out = '';
  for (const character of text) {
    const kept = character.codePointAt(0)! < 0x80 ? ASCII_KEPT.test(character) && !ASCII_ENCODED.has(character) : NON_ASCII_KEPT.test(character);
    out += kept ? character : encodeCharacter(character);
  }
  return out;
}

/** Free text for a pf comment or the inside of a pf `"…"` string. */
export function pfText(text: string): string {
  return safeText(text);
}

/** Free text for an nftables `#` comment or the inside of an nftables `"…"` string. */
export function nftText(text: string): string {
  return safeText(text);
}

/**
 * The one writer of text shown on a terminal before or after login. Control characters (CR, NUL, ESC and with
 * it every escape sequence, C1 controls) are removed; LF and TAB stay. For /etc/issue, agetty expands
 * backslash sequences (`\e` would emit ESC again), so every backslash is doubled, which agetty prints as one.
 */
export function terminalText(text: string, file: 'issue' | 'motd'): string {
  const plain = stripTerminalControls(text);
  const body = file === 'issue' ? plain.replace(/\\/g, '\\\\') : plain;
  return body.endsWith('\n') ? body : `${body}\n`;
}
