import { renderRefused } from '../render/refusal.js';

const TIMEOUTS = new Set(['tcp.established', 'udp.first', 'udp.single', 'udp.multiple', 'icmp.first', 'icmp.error']);

/** The one writer of pf option lines loaded with `pfctl -O` (options only): `set limit states N`, `set timeout NAME N`. */
export function pfOptionLine(option: { limit: 'states' } | { timeout: string }, value: number | string, field: string): string {
  const text = String(value);
  if (!/^(0|[1-9]\d{0,9})$/.test(text)) throw renderRefused('pf options', field, 'not a whole number');
  if ('limit' in option) return `set limit states ${text}`;
  if (!TIMEOUTS.has(option.timeout)) throw renderRefused('pf options', field, 'not a pf timeout');
  return `set timeout ${option.timeout} ${text}`;
}
