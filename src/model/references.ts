import type { ConfigData, ConfigObject } from '../store/config-store.js';
import type { Reference } from './declarations.js';

/** The values a reference names in one object (empty, null and "" name nothing). */
export function referencedValues(reference: Reference, data: ConfigData): unknown[] {
  if (reference.values) return reference.values(data);
  const value = data[reference.field];
  if (value === undefined || value === null || value === '') return [];
  return Array.isArray(value) ? value : [value];
}

/** The value of `target` that a reference with `by` matches. */
export const referenceKeyOf = (target: ConfigObject, by = 'id'): unknown => (by === 'id' ? target.id : target.data[by]);
