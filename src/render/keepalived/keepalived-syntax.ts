/**
 * The one place that turns values into keepalived.conf text (and conntrackd.conf, whose parser has the same
 * whitespace-word grammar). keepalived splits a line into words and gives meaning to `{ } ! # " $ @ ~` (blocks,
 * comments, quoting, macros `$NAME`, conditional lines `@id`, sequences `~SEQ`) and to `include`. So every value
 * must be one word of a known shape: letters, digits and the punctuation of names, addresses and absolute paths.
 * The renderer refuses (RenderRefusal) anything else rather than emit it.
 */
import { isIP } from 'node:net';
import { RenderRefusal } from '../refusal.js';

const WORD = /^[A-Za-z0-9._:/%+=-]+$/;

export function keepalivedWord(value: string | number, field: string): string {
  const text = String(value);
  if (text.length === 0 || text.length > 255 || !WORD.test(text)) throw new RenderRefusal(field, 'is not a single keepalived word');
  // A word that could read as an option where a value is expected.
  if (text.startsWith('-')) throw new RenderRefusal(field, 'is not a single keepalived word');
  return text;
}

export function keepalivedAddress(value: string, field: string): string {
  if (!isIP(value)) throw new RenderRefusal(field, 'is not an IP address');
  return keepalivedWord(value, field);
}

export function keepalivedInteger(value: number, min: number, max: number, field: string): string {
  if (!Number.isInteger(value) || value < min || value > max) throw new RenderRefusal(field, `is not an integer between ${min} and ${max}`);
  return keepalivedWord(value, field);
}

/** An absolute path without `..` segments. */
export function keepalivedPath(value: string, field: string): string {
  const text = keepalivedWord(value, field);
  if (!text.startsWith('/') || text.split('/').includes('..')) throw new RenderRefusal(field, 'is not an absolute path');
  return text;
}
