/** Reads an event stream, handing over each block (event or comment) as it completes. */
export async function* eventBlocks(response: Response): AsyncGenerator<string> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      yield buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
    }
  }
}

/** One event block's id, name and JSON data (its data lines joined). */
export const parseEvent = (block: string) => ({
  id: Number(/^id: (\d+)$/m.exec(block)?.[1]),
  event: /^event: (.+)$/m.exec(block)?.[1],
  data: JSON.parse(block.split('\n').filter((l) => l.startsWith('data: ')).map((l) => l.slice(6)).join('\n')),
});

/** The stream's events as they complete (comments and retry skipped). */
export async function* events(response: Response): AsyncGenerator<ReturnType<typeof parseEvent>> {
  for await (const block of eventBlocks(response)) if (block.startsWith('id: ')) yield parseEvent(block);
}
