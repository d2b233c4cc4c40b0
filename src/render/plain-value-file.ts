import { renderRefused } from './refusal.js';

/** A file holding one value on one line (hostname, timezone): the value must match its grammar, whole. */
export function plainValueFile(value: string, grammar: (value: string) => boolean, format: string, field: string): string {
  if (!grammar(value)) throw renderRefused(format, field, 'does not match its grammar');
  return `${value}\n`;
}
