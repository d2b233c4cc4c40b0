import { conflict, type HttpError } from '../core/errors.js';

/**
 * A stored value that does not fit its format's grammar (e.g. restored from an older release) is never emitted:
 * the render is refused with 409 naming the object and field, never echoing the value itself.
 */
export function renderRefused(format: string, field: string, why: string): HttpError {
  return conflict(`${field}: the stored value cannot be written into the ${format}: ${why}; correct it and apply again`);
}
