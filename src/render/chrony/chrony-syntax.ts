/**
 * The one place that turns values into chrony.conf text. chrony has no quoting at all: a directive's arguments
 * are whitespace-separated words on one line. So every value must be a single word of a known shape; the
 * renderer refuses (RenderRefusal) anything else rather than emit it.
 */
import { isIP } from 'node:net';
import { RenderRefusal } from '../refusal.js';

/** One chrony word: letters, digits and the punctuation of names, addresses and absolute paths. */
const WORD = /^[A-Za-z0-9._:/%+-]+$/;

export function chronyToken(value: string | number, field: string): string {
  const text = String(value);
  if (!WORD.test(text)) throw new RenderRefusal(field, 'is not a single chrony word');
  return text;
}

/** An absolute path without `..` segments. */
export function chronyPath(value: string, field: string): string {
  const text = chronyToken(value, field);
  if (!text.startsWith('/') || text.split('/').includes('..')) throw new RenderRefusal(field, 'is not an absolute path');
  return text;
}

/** An NTP server: an IP address or a host name. */
export function chronyHost(value: string, field: string): string {
  const name = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/;
  if (!isIP(value) && !(value.length <= 253 && name.test(value))) throw new RenderRefusal(field, 'is not a host name or IP address');
  return chronyToken(value, field);
}

export function chronyAddress(value: string, field: string): string {
  if (!isIP(value)) throw new RenderRefusal(field, 'is not an IP address');
  return chronyToken(value, field);
}

export function chronyNumber(value: number, field: string): string {
  if (!Number.isFinite(value)) throw new RenderRefusal(field, 'is not a number');
  return chronyToken(value, field);
}

/** A decimal with a fixed number of places (`0.128`). */
export function chronyDecimal(value: number, places: number, field: string): string {
  if (!Number.isFinite(value)) throw new RenderRefusal(field, 'is not a number');
  return chronyToken(value.toFixed(places), field);
}
