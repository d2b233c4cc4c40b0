/**
 * Where Kea's hook libraries are installed (Debian: `/usr/lib/<multiarch>/kea/hooks/`, package kea-common,
 * pulled in by kea-dhcp4-server). The configuration names them by absolute path.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export type KeaHookName = 'libdhcp_lease_cmds.so' | 'libdhcp_ha.so' | 'libdhcp_run_script.so';

function hookDirectories(): string[] {
  const multiarch = (() => {
    try {
      return readdirSync('/usr/lib').map((entry) => join('/usr/lib', entry, 'kea', 'hooks'));
    } catch {
      return [];
    }
  })();
  return [...multiarch, '/usr/lib/kea/hooks', '/usr/local/lib/kea/hooks'].filter((dir) => existsSync(dir));
}

/** The absolute path of an installed hook library, or null. */
export function keaHookLibrary(name: KeaHookName): string | null {
  for (const dir of hookDirectories()) {
    const path = join(dir, name);
    if (existsSync(path)) return path;
  }
  return null;
}
