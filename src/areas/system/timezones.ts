import { readdirSync, openSync, readSync, closeSync, existsSync } from 'node:fs';
import { join } from 'node:path';

export const ZONEINFO = '/usr/share/zoneinfo';
/** Directories of the zone database that hold duplicates or non-zone files. */
const SKIP = new Set(['posix', 'right', 'SystemV', 'Etc/posixrules']);

function isTzif(path: string): boolean {
  const fd = openSync(path, 'r');
  try {
    const magic = Buffer.alloc(4);
    readSync(fd, magic, 0, 4, 0);
    return magic.toString('latin1') === 'TZif';
  } finally {
    closeSync(fd);
  }
}

/** IANA zone names from the system zone database (TZif files), sorted, always with UTC; Intl's list when absent. */
export function listTimezones(root = ZONEINFO): string[] {
  const names = new Set<string>(['UTC']);
  if (!existsSync(root)) {
    for (const zone of Intl.supportedValuesOf('timeZone')) names.add(zone);
    return [...names].sort();
  }
  const walk = (dir: string, prefix: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const name = prefix ? `${prefix}/${entry.name}` : entry.name;
      if (SKIP.has(name) || entry.name.startsWith('.') || !/^[A-Z]/.test(entry.name)) continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path, name);
      else if ((entry.isFile() || entry.isSymbolicLink()) && !entry.name.includes('.') && isTzif(path)) names.add(name);
    }
  };
  walk(root, '');
  return [...names].sort();
}
