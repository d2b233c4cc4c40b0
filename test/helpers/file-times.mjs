// A node:test reporter, plain JavaScript because node loads reporters before tsx's loader is in place.
import { relative } from 'node:path';

/**
 * Each test file's wall time as the runner saw it: node reports a file as a test named after its path,
 * dequeued when its process starts and complete when it ends. Writes the JSON object test/durations.json
 * holds, `{ "test/x.test.ts": seconds }`, slowest first; test/README.md says how to refresh that list.
 */
export default async function* fileTimes(source) {
  const started = new Map();
  const seconds = [];
  for await (const { type, data } of source) {
    if (data?.file === undefined || data.name !== data.file) continue;
    if (type === 'test:dequeue') started.set(data.file, Date.now());
    if (type === 'test:complete' && started.has(data.file)) {
      seconds.push([relative(process.cwd(), data.file), Math.round((Date.now() - started.get(data.file)) / 100) / 10]);
    }
  }
  yield `${JSON.stringify(Object.fromEntries(seconds.sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))), null, 2)}\n`;
}
