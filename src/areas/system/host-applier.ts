/**
 * Host settings in the apply coordinator: a reload, a restore, an import or the commit-confirm rollback puts
 * every stored host section in force again (hostname, banner, sshd, console, resolvers, state table), the
 * same way its PUT does. A section never stored leaves the host's own values alone; a section already in
 * force as stored (put there by this process) is skipped, so a reload does not reload sshd or rerun
 * update-grub for nothing. A section the host refuses fails the apply with 409 naming it; the others still run.
 */
import type { AppContext } from '../../context.js';
import { conflict } from '../../core/errors.js';
import { canonicalJson } from '../../core/canonical-json.js';
import type { ConfigData } from '../../store/config-store.js';
import type { SingletonModel } from '../../model/singleton-model.js';
import { hostSettingsOf } from '../common/host-settings.js';
import { stateTableTuningOf } from '../../platform/host-settings.js';
import type { SystemService } from './service.js';

export function registerHostSettingsApplier(context: AppContext, system: SystemService, sections: Record<string, SingletonModel>): void {
  const site = hostSettingsOf(context);
  const domain = () => String(context.store.getSingleton('system_general')?.domain ?? '');
  const putInForce: Record<string, (data: ConfigData) => Promise<unknown>> = {
    system_general: (data) => system.applyGeneral(data),
    system_banner: (data) => system.applyBanner(data),
    system_ssh: (data) => system.applySsh(data),
    system_console: (data) => system.applyConsole(data),
    dns_system: async (data) => {
      if (data.configured === true) await site.host.resolvers({ servers: data.servers as string[], search: domain() ? [domain()] : [] });
    },
    settings_pf_tuning: (data) => site.host.stateTable(stateTableTuningOf(data)),
  };
  context.apply.register('host-settings', () => site.exclusive(async () => {
    const failures: string[] = [];
    for (const [kind, put] of Object.entries(putInForce)) {
      const stored = context.store.getSingleton(kind);
      if (!stored) continue;
      const data = sections[kind]?.read() ?? stored;
      const text = canonicalJson(data);
      if (site.inForce.get(kind) === text) continue;
      try {
        await put(data);
        site.inForce.set(kind, text);
      } catch (error) {
        failures.push(`${kind}: ${(error as Error).message}`);
      }
    }
    if (failures.length > 0) throw conflict(`host settings not put in force: ${failures.join('; ')}`);
  }));
}

/**
 * At start, the state table's values are put back in force: the kernel settings Bulwark owns (conntrack sysctls
 * on linux, pf options on FreeBSD), listed in /status as `kernel-settings`. They are the one host setting that
 * does not survive a reboot reliably on its own: sysctl.d is read early at boot, often before conntrack is loaded
 * (its sysctls do not exist yet), while every other setting lives in a file the host reads when it needs it. What
 * is stored is what was applied: the PUT stores a value only once the kernel took it (a refusal stores nothing).
 */
export function registerStateTableRestore(context: AppContext): void {
  const tuning = () => stateTableTuningOf(context.store.getSingleton('settings_pf_tuning') ?? {});
  const site = hostSettingsOf(context);
  context.restore.register({
    name: 'kernel-settings',
    daemon: context.platform.name === 'freebsd' ? 'pfctl' : 'sysctl',
    enabled: () => Object.keys(tuning()).length > 0,
    // Running: the kernel holds every configured value (the simulated platform only renders them).
    running: async () => {
      if (context.platform.simulated) return true;
      const live = await site.host.readStateTable();
      return Object.entries(tuning()).every(([field, value]) => live[field as keyof typeof live] === value);
    },
    appliedVersion: () => context.apply.versions.activeIfCurrent()?.version ?? null,
    restore: async () => {
      const stored = context.store.getSingleton('settings_pf_tuning');
      await site.exclusive(() => site.host.stateTable(tuning()));
      site.inForce.set('settings_pf_tuning', canonicalJson(stored));
    },
  });
}
