// custom-logger: each event it is sent becomes one JSON line, kept in entries.jsonl (the newest max_entries) and printed.
import { appendFileSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

let file = null;
let max = 10000;
let count = 0;

function trim() {
  // Rewritten only when 10 % over the bound, so appending stays cheap.
  if (count <= max * 1.1) return;
  const kept = readFileSync(file, 'utf8').split('\n').filter(Boolean).slice(-max);
  writeFileSync(`${file}.tmp`, kept.map((line) => `${line}\n`).join(''));
  renameSync(`${file}.tmp`, file);
  count = kept.length;
}

for await (const line of createInterface({ input: process.stdin })) {
  const message = JSON.parse(line);
  if (message.type === 'hello' || message.type === 'config') max = Number(message.settings.max_entries ?? max);
  if (message.type === 'hello') {
    file = join(message.state_dir, 'entries.jsonl');
    count = existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0;
    console.log(`keeping up to ${max} entries; ${count} kept so far`);
  } else if (message.type === 'event' && file) {
    const entry = JSON.stringify({ at: message.at, hook: message.hook, topic: message.topic, payload: message.payload });
    appendFileSync(file, `${entry}\n`);
    count++;
    console.log(entry);
  }
  if (file) trim();
}
