import { Sealer } from '../../core/crypto.js';
import type { ConfigData, ConfigObject } from '../../store/config-store.js';
import type { KindCatalogue } from '../../store/kind-catalogue.js';

/** What a redacted export puts where a secret was (an empty secret stays empty). */
export const REDACTED = '**REDACTED**';
/** Prefix of a secret wrapped under an export passphrase. */
export const WRAPPED_PREFIX = 'pw:v1:';

/** Where a secret sits inside an object's data: `field`, `field.sub`, `list[2]`. */
export type SecretPath = (string | number)[];

export const pathText = (path: SecretPath): string =>
  path.map((part, index) => (typeof part === 'number' ? `[${part}]` : index === 0 ? part : `.${part}`)).join('');

/**
 * Copies `data`, passing every secret value through `replace`. A value is a secret when it sits in a field the
 * kind declares write-only (collections and settings sections register those with the store), or when it is
 * sealed text anywhere in the object (an area that sealed a nested value by hand is covered too), or when
 * `isSecret` says so (the markers of an export file on import).
 */
export function mapSecrets(
  data: ConfigData,
  writeOnly: readonly string[],
  replace: (value: string, path: SecretPath) => string,
  isSecret: (value: string) => boolean = Sealer.isSealed,
): ConfigData {
  const declared = new Set(writeOnly);
  const walk = (value: unknown, path: SecretPath, inDeclared: boolean): unknown => {
    if (typeof value === 'string') return value !== '' && (inDeclared || isSecret(value)) ? replace(value, path) : value;
    if (Array.isArray(value)) return value.map((item, index) => walk(item, [...path, index], inDeclared));
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, walk(item, [...path, key], inDeclared)]));
    }
    return value;
  };
  return Object.fromEntries(Object.entries(data).map(([key, value]) => [key, walk(value, [key], declared.has(key))]));
}

/** Calls visit for every secret of every object (counting, listing). */
export function forEachSecret(objects: readonly ConfigObject[], kinds: KindCatalogue, visit: (object: ConfigObject, path: SecretPath, value: string) => void, isSecret?: (value: string) => boolean): void {
  for (const object of objects) {
    mapSecrets(object.data, kinds.secretFields(object.kind), (value, path) => {
      visit(object, path, value);
      return value;
    }, isSecret);
  }
}

/** The value at a path inside data, or undefined. */
export function valueAt(data: unknown, path: SecretPath): unknown {
  let current = data;
  for (const part of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string | number, unknown>)[part];
  }
  return current;
}

/** A copy of an object with every secret replaced by REDACTED: what may leave the appliance without a passphrase. */
export function redactObject(object: ConfigObject, kinds: KindCatalogue): ConfigObject {
  return { ...object, data: mapSecrets(object.data, kinds.secretFields(object.kind), () => REDACTED) };
}
