/**
 * The one host-settings driver of an application (system, DNS and settings areas share it) and the lock that
 * puts its changes in force one at a time: each PUT checks its section, applies it to the host, and only then
 * stores it, so a refused change (409) leaves both the host and the stored settings as they were.
 */
import type { AppContext } from '../../context.js';
import { Semaphore } from '../../core/semaphore.js';
import type { HostSettings } from '../../platform/host-settings.js';

export interface HostSettingsSite {
  host: HostSettings;
  /** Runs an apply-then-store step alone. */
  exclusive<T>(step: () => Promise<T>): Promise<T>;
  /** What this process last put in force per section (canonical JSON), so a reload skips what is unchanged. */
  inForce: Map<string, string>;
}

const sites = new WeakMap<AppContext, HostSettingsSite>();

export function hostSettingsOf(context: AppContext): HostSettingsSite {
  let site = sites.get(context);
  if (!site) {
    const host = context.platform.hostSettings({
      dataDir: context.config.dataDir,
      log: (detail) => context.log.warn({ detail }, 'a host tool refused a host settings change'),
    });
    const lock = new Semaphore(1);
    site = { host, exclusive: (step) => lock.run(step), inForce: new Map() };
    sites.set(context, site);
  }
  return site;
}
