import { renderRefused } from '../refusal.js';

/**
 * The one writer of FreeBSD rc.conf / loader.conf assignments (`name="value"`, as sysrc writes them). Names are
 * shell variable names; values are printable text without `"`, `\`, `$`, backtick or any control character, so
 * the double-quoted word can neither end early nor expand.
 */
export function rcConfAssignment(name: string, value: string | number, field: string): string {
  const text = String(value);
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw renderRefused('rc.conf', field, 'not a variable name');
  if (!/^[\x20-\x7e]*$/.test(text) || /["\\$`]/.test(text)) throw renderRefused('rc.conf', field, 'holds a character rc.conf cannot carry');
  return `${name}="${text}"`;
}
