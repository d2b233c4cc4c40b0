import type { ConfigData } from '../store/config-store.js';
import type { UniqueField } from './declarations.js';

export interface UniqueRule {
  field: string;
  caseInsensitive: boolean;
}

export const uniqueRule = (declared: UniqueField): UniqueRule =>
  typeof declared === 'string' ? { field: declared, caseInsensitive: false } : { field: declared.field, caseInsensitive: true };

/** The value two objects clash on, or undefined when the field is not set (unset fields never clash). */
export function uniqueKey(rule: UniqueRule, data: ConfigData): unknown {
  const value = data[rule.field];
  if (value === undefined) return undefined;
  return rule.caseInsensitive && typeof value === 'string' ? value.toLowerCase() : value;
}
