import { HttpError } from '../core/errors.js';

/**
 * The one refusal of every renderer: a stored value that does not fit its format's grammar (restored from an older
 * release, slipped past validation) is never emitted. The refusal names the field and why, never the value, and
 * the client gets 409. One type, `RenderRefusal` (an HttpError of status 409), worded by where it is made:
 * - with a format (`renderRefused(format, field, why)`): the renderer words the whole 409 itself (the file writers
 *   of src/render/);
 * - without one (`new RenderRefusal(field, reason)`): `field: reason`, which the area words as its own 409
 *   (`renderOr409` in areas/common/checker-refusal.ts, or the platform's "… refused: field reason"). One that no
 *   caller words still answers 409 naming the field, never a 500.
 */
export class RenderRefusal extends HttpError {
  constructor(
    readonly field: string,
    readonly reason: string,
    readonly format?: string,
  ) {
    super(409, format === undefined ? `${field}: ${reason}` : `${field}: the stored value cannot be written into the ${format}: ${reason}; correct it and apply again`);
    this.name = 'RenderRefusal';
  }
}

/** The refusal of a renderer that words its own 409, naming the format it could not write. */
export function renderRefused(format: string, field: string, why: string): RenderRefusal {
  return new RenderRefusal(field, why, format);
}

/** Is this a refusal its caller words as its own 409 (one made without a format; one with a format is worded already)? */
export function isRenderRefusal(error: unknown): error is RenderRefusal {
  return error instanceof RenderRefusal && error.format === undefined;
}
