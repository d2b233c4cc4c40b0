import { isDeepStrictEqual } from 'node:util';
import { parse, stringify } from 'yaml';
import { renderRefused } from './refusal.js';

/**
 * The one writer of YAML files: the document is built as an object and serialised by the yaml library (which
 * quotes every scalar that needs it), then read back; if the text does not parse into exactly the object, the
 * file is not written. No YAML is ever assembled from strings.
 */
export function yamlDocument(header: string, document: Record<string, unknown>, format: string): string {
  const plain = JSON.parse(JSON.stringify(document)) as unknown;
  const text = stringify(plain, { sortMapEntries: false });
  if (!isDeepStrictEqual(parse(text), plain)) throw renderRefused(format, 'document', 'the serialised YAML does not read back as the intended structure');
  const comment = header.split('\n').map((line) => `# ${line.replace(/[^\x20-\x7e]/g, '')}`).join('\n');
  return `${comment}\n${text}`;
}
