/**
 * Unbound's Python module (Debian's `python3-unbound` ships its support code, `unboundmodule.py`). Bulwark's
 * blocklist filter runs inside it (src/render/unbound/unbound-blocklist.ts says why). Debian's unbound embeds Python
 * without the distribution's site directory on its path, so the checker and the daemon are told where the
 * support code is.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { missingTool, type MissingTool } from './debian-packages.js';

const SUPPORT_FILE = 'unboundmodule.py';
const SEARCH_DIRS = ['/usr/lib/python3/dist-packages', '/usr/local/lib/python3/dist-packages'];

/** Does this Unbound configuration load a Python script? */
export function usesPythonModule(configText: string): boolean {
  return /^\s*python-script:/m.test(configText);
}

/** The directory holding Unbound's Python support code, or null when python3-unbound is not installed. */
export function unboundPythonDir(): string | null {
  return SEARCH_DIRS.find((dir) => existsSync(join(dir, SUPPORT_FILE))) ?? null;
}

/**
 * The environment Unbound (and unbound-checkconf) need for a configuration: `PYTHONPATH` when it loads a
 * Python script; `missing` when that script cannot run on this system.
 */
export function unboundEnvironment(configText: string): { env: Record<string, string>; missing: MissingTool | null } {
  if (!usesPythonModule(configText)) return { env: {}, missing: null };
  const dir = unboundPythonDir();
  if (!dir) return { env: {}, missing: missingTool(SUPPORT_FILE) };
  return { env: { PYTHONPATH: dir }, missing: null };
}
