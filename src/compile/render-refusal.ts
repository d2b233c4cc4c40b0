/**
 * Thrown by a renderer when a value would not stay inert in the file it renders (a stored value that slipped
 * past validation, e.g. an old version restored). The renderer refuses rather than emit it; the area answers
 * 409 naming the field, never the value.
 */
export class RenderRefusal extends Error {
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${field}: ${reason}`);
    this.name = 'RenderRefusal';
  }
}

/** Runs a render and turns a refusal into the caller's error (the areas map it to 409). */
export function isRenderRefusal(error: unknown): error is RenderRefusal {
  return error instanceof RenderRefusal;
}
