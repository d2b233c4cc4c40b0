import { isCleanAbsolutePath } from '../grammar.js';
import { renderRefused } from '../refusal.js';

/** The one quoting of a logrotate path: a clean absolute path (no quotes, braces, spaces, globs), double-quoted. */
export function logrotatePath(path: string, field: string): string {
  if (!isCleanAbsolutePath(path)) throw renderRefused('logrotate configuration', field, 'not a clean absolute path');
  return `"${path}"`;
}

/** The directives Bulwark writes inside a logrotate block, each with its value grammar. */
const DIRECTIVES = {
  size: (value: string) => /^[1-9]\d{0,3}M$/.test(value),
  rotate: (value: string) => /^\d{1,3}$/.test(value),
  compress: (value: string) => value === '',
  nocompress: (value: string) => value === '',
  missingok: (value: string) => value === '',
  notifempty: (value: string) => value === '',
  copytruncate: (value: string) => value === '',
} as const;

export function logrotateDirective(name: keyof typeof DIRECTIVES, value: string | number, field: string): string {
  const text = String(value);
  if (!DIRECTIVES[name](text)) throw renderRefused('logrotate configuration', field, `not a valid ${name} value`);
  return text === '' ? name : `${name} ${text}`;
}
