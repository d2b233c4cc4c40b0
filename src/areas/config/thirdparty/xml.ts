import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { badRequest, HttpError } from '../../../core/errors.js';

/** config.xml files seen in the field are 50–500 KB; 10 MiB leaves room without inviting abuse. */
export const MAX_XML_BYTES = 10 * 1024 * 1024;

/** A parsed XML element: text, or children by name (repeated names become arrays), attributes as `@_name`. */
export type XmlNode = string | { [name: string]: XmlNode | XmlNode[] };

export interface ForeignConfig {
  kind: 'opnsense' | 'pfsense';
  version: string | null;
  root: Record<string, unknown>;
}

/** The input is not XML a foreign firewall would write. Preview reports it; import answers 400. */
export class ForeignConfigError extends Error {}

/**
 * Parses an OPNsense or pfSense config.xml. Document type declarations are refused outright (no internal or
 * external entities, no entity expansion), as are inputs over 10 MiB (413); only the five predefined XML
 * entities and character references are decoded.
 */
export function parseForeignConfig(xml: string): ForeignConfig {
  if (Buffer.byteLength(xml, 'utf8') > MAX_XML_BYTES) throw new HttpError(413, `body.xml: the configuration is larger than ${MAX_XML_BYTES / 1024 / 1024} MiB`);
  if (/<!DOCTYPE/i.test(xml) || /<!ENTITY/i.test(xml)) throw badRequest('body.xml: document type declarations and entity definitions are refused');
  const valid = XMLValidator.validate(xml, { allowBooleanAttributes: true });
  if (valid !== true) throw new ForeignConfigError(`not well-formed XML: ${valid.err.msg} (line ${valid.err.line}, column ${valid.err.col})`);
  const parser = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '@_',
    parseTagValue: false,
    parseAttributeValue: false,
    trimValues: true,
    ignoreDeclaration: true,
    ignorePiTags: true,
    processEntities: true,
    htmlEntities: false,
    // OPNsense writes elements named <constructor>; renamed so they can never touch an object's prototype.
    transformTagName: renameReserved,
    transformAttributeName: renameReserved,
  });
  const document = parser.parse(xml) as Record<string, unknown>;
  const kind = 'opnsense' in document ? 'opnsense' : 'pfsense' in document ? 'pfsense' : undefined;
  if (!kind) throw new ForeignConfigError(`the root element must be <opnsense> or <pfsense>, found <${Object.keys(document)[0] ?? 'nothing'}>`);
  const root = document[kind];
  const rootObject = root !== null && typeof root === 'object' && !Array.isArray(root) ? (root as Record<string, unknown>) : {};
  return { kind, version: text(rootObject.version) || null, root: rootObject };
}

const RESERVED = new Set(['__proto__', 'constructor', 'prototype']);
const renameReserved = (name: string) => (RESERVED.has(name) ? `${name}_` : name);

/** The text of an element ('' for empty or structured elements). */
export function text(node: unknown): string {
  if (typeof node === 'string') return node.trim();
  if (typeof node === 'number' || typeof node === 'boolean') return String(node);
  if (node && typeof node === 'object' && !Array.isArray(node) && '#text' in node) return text((node as Record<string, unknown>)['#text']);
  return '';
}

/** An element that may appear once or many times, as a list (empty elements are no items). */
export function list(node: unknown): Record<string, unknown>[] {
  if (node === undefined || node === null || node === '') return [];
  const items = Array.isArray(node) ? node : [node];
  return items.filter((item) => item !== '' && item !== null).map((item) => (typeof item === 'object' ? (item as Record<string, unknown>) : { '#text': item }));
}

/** A child element, or an empty object. */
export function child(node: unknown, ...names: string[]): Record<string, unknown> {
  let current: unknown = node;
  for (const name of names) {
    if (!current || typeof current !== 'object' || Array.isArray(current)) return {};
    current = (current as Record<string, unknown>)[name];
  }
  return current && typeof current === 'object' && !Array.isArray(current) ? (current as Record<string, unknown>) : {};
}

/** pfSense-style flags: the element is present (`<disabled/>`, `<log>1</log>`); OPNsense MVC uses 1/0. */
export function flag(node: Record<string, unknown>, name: string): boolean {
  if (!(name in node)) return false;
  const value = text(node[name]).toLowerCase();
  return value !== '0' && value !== 'no' && value !== 'off' && value !== 'false';
}
