import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A supervised program's local log (`<data>/logs/<program>.log`, docs/local-logs.md) once it holds a line
 * matching `pattern`, polled until `timeoutMs`; fails naming the program and what the file held.
 */
export async function daemonLogWith(dataDir: string, program: string, pattern: RegExp, timeoutMs = 30_000): Promise<string> {
  const file = join(dataDir, 'logs', `${program}.log`);
  const deadline = Date.now() + timeoutMs;
  let text = '';
  for (;;) {
    text = existsSync(file) ? readFileSync(file, 'utf8') : '';
    if (pattern.test(text)) return text;
    if (Date.now() > deadline) throw new Error(`logs/${program}.log has no line matching ${pattern}; it holds:\n${text.slice(-2000) || '(nothing)'}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The secrets that occur in any file under `<data>/logs/` (an empty list when none leaked). */
export function secretsInLogs(dataDir: string, secrets: string[]): string[] {
  const dir = join(dataDir, 'logs');
  if (!existsSync(dir)) return [];
  const texts = readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => readFileSync(join(entry.parentPath, entry.name), 'latin1'));
  return secrets.filter((secret) => texts.some((text) => text.includes(secret)));
}
