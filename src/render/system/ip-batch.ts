import { renderRefused } from '../refusal.js';

/**
 * The one writer of words in an iproute2 batch (`ip -batch -`). iproute2 splits a batch line on blanks, takes a
 * word in double or single quotes whole, and cuts the line at the first `#` wherever it is, so a value may
 * never carry a newline, a `#`, a control character or the quote that would close it: such a value is refused,
 * never escaped. A word with blanks is written in double quotes (an interface description).
 */
export function ipBatchWord(value: unknown, field: string): string {
  const text = String(value);
  if (/[\x00-\x1f\x7f#"]/.test(text)) throw renderRefused('iproute2 batch', field, 'a newline, control character, # or " cannot be applied');
  if (text === '') return '""';
  return /[\s']/.test(text) ? `"${text}"` : text;
}

/** A batch line from words that are each one value (commands and keywords are passed as fixed words). */
export const ipBatchLine = (words: readonly (string | { value: unknown; field: string })[]): string =>
  words.map((word) => (typeof word === 'string' ? fixedWord(word) : ipBatchWord(word.value, word.field))).join(' ');

function fixedWord(word: string): string {
  if (!/^[A-Za-z0-9_.:/-]+$/.test(word)) throw new Error(`ip batch keyword ${JSON.stringify(word)} is not a fixed word`);
  return word;
}
