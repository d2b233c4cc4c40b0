import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, relative, resolve } from 'node:path';

/** A path under the data directory; anything that would escape it (`..`, absolute paths) is refused. */
export function dataPath(dataDir: string, ...segments: string[]): string {
  const root = resolve(dataDir);
  const path = resolve(root, ...segments);
  const rel = relative(root, path);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) throw new Error(`path ${segments.join('/')} escapes the data directory`);
  return path;
}

/** Writes a rendered file atomically (temporary file then rename), creating its directory. */
export function writeDataFile(dataDir: string, segments: string[], text: string | Buffer, mode = 0o640): string {
  const path = dataPath(dataDir, ...segments);
  mkdirSync(dirname(path), { recursive: true });
  const temporary = `${path}.tmp-${process.pid}`;
  writeFileSync(temporary, text, { mode });
  renameSync(temporary, path);
  return path;
}

export function removeDataFile(dataDir: string, segments: string[]): void {
  rmSync(dataPath(dataDir, ...segments), { force: true });
}
