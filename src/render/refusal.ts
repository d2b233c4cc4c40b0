import { conflict, type HttpError } from '../core/errors.js';

/**
 * The one refusal of every renderer: a stored value that does not fit its format's grammar (restored from an older
 * release, slipped past validation) is never emitted. The refusal names the field and why, never the value, and
 * the client gets 409. Two forms of it, by where the 409 is worded:
 * - `renderRefused(format, field, why)`: the renderer words the 409 itself (the file writers of src/render/).
 * - `RenderRefusal(field, reason)`: thrown by renderers whose area words the 409 (`renderOr409` in
 *   areas/common/checker-refusal.ts, or the platform's "… refused: field reason").
 */
export function renderRefused(format: string, field: string, why: string): HttpError {
  return conflict(`${field}: the stored value cannot be written into the ${format}: ${why}; correct it and apply again`);
}

export class RenderRefusal extends Error {
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${field}: ${reason}`);
    this.name = 'RenderRefusal';
  }
}

/** Is this a RenderRefusal (for callers that turn it into their own 409)? */
export function isRenderRefusal(error: unknown): error is RenderRefusal {
  return error instanceof RenderRefusal;
}
