/**
 * The one host-settings driver of an application (system, DNS and settings areas share it) and the lock that
 * puts its changes in force one at a time: each PUT checks its section, applies it to the host, and only then
 * stores it, so a refused change (409) leaves both the host and the stored settings as they were.
 */
import type { AppContext } from '../../context.js';
import { Semaphore } from '../../core/semaphore.js';
import { canonicalJson } from '../../core/canonical-json.js';
import type { HostSettings } from '../../platform/host-settings.js';

export interface HostSettingsSite {
  host: HostSettings;
  /** Runs an apply-then-store step alone. */
  exclusive<T>(step: () => Promise<T>): Promise<T>;
  /** What this process last put in force per section (canonical JSON), so a reload skips what is unchanged. */
  inForce: Map<string, string>;
  /**
   * Stores a section just put in force. When the store refuses the write (a conditional request answered 412
   * because the configuration changed while the host was being changed), `restore` puts the previous values
   * back in force first, so host and stored settings still agree.
   */
  keep<T>(kind: string, write: () => T, restore: () => Promise<unknown>): Promise<T>;
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
    const inForce = new Map<string, string>();
    const keep = async <T>(kind: string, write: () => T, restore: () => Promise<unknown>): Promise<T> => {
      try {
        const stored = write();
        inForce.set(kind, canonicalJson(stored));
        return stored;
      } catch (error) {
        await restore().catch((failure: Error) => context.log.error({ err: failure, kind }, 'the previous host settings could not be put back in force'));
        throw error;
      }
    };
    site = { host, exclusive: (step) => lock.run(step), inForce, keep };
    sites.set(context, site);
  }
  return site;
}
