/**
 * The JSON text of a stored data object, remembered per object: the configuration store replaces a data object
 * on every update and never changes one in place, so its text is fixed once it is stored. Only the text is
 * remembered here; every decision (cache hits, "changed or not") compares texts, never identities.
 */
const texts = new WeakMap<object, string>();

export function dataText(data: object): string {
  let text = texts.get(data);
  if (text === undefined) {
    text = JSON.stringify(data);
    texts.set(data, text);
  }
  return text;
}

/** Serialises a data object as it is being stored, and remembers the text (the store writes it fresh every time). */
export function storedDataText(data: object): string {
  const text = JSON.stringify(data);
  texts.set(data, text);
  return text;
}
