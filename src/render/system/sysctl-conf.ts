import { renderRefused } from '../refusal.js';

/** The one writer of sysctl.conf lines (sysctl.d on Linux, /etc/sysctl.conf on FreeBSD): `key = value`, a dotted key and a whole number. */
export function sysctlLine(key: string, value: number | string, field: string): string {
  const text = String(value);
  if (!/^[a-z][a-z0-9_]*(\.[a-z0-9_]+)+$/.test(key)) throw renderRefused('sysctl configuration', field, 'not a sysctl name');
  if (!/^(0|[1-9]\d{0,9})$/.test(text)) throw renderRefused('sysctl configuration', field, 'not a whole number');
  return `${key} = ${text}`;
}
