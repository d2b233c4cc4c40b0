/**
 * keepalived.conf for /cluster/carp: one VRRP instance per virtual address (vhid → virtual_router_id), all in
 * one sync group so every address moves together. The priority comes from the node's role; two track files move
 * it without a reload: the demotion (promote/demote) and the failing health checks. The sync group's notify
 * script commits conntrackd's external cache on takeover. Every value goes through keepalived-syntax.ts.
 */
import { keepalivedAddress, keepalivedInteger, keepalivedPath, keepalivedWord } from './keepalived-syntax.js';
import { RenderRefusal } from '../refusal.js';
import type { HaRole, VrrpAddress } from '../../platform/ha.js';

export const ROLE_PRIORITY: Record<HaRole, number> = { primary: 150, secondary: 100 };
/** Priority lost per failing health check: one failing check puts a primary below a healthy secondary. */
export const HEALTH_WEIGHT = 60;
export const DEMOTED = 240;
export const PROMOTED = -100;

export interface KeepalivedFiles {
  demotionFile: string;
  healthFile: string;
  notifyScript: string | null;
}

export function renderKeepalivedConf(input: { role: HaRole; addresses: VrrpAddress[]; routerId: string }, files: KeepalivedFiles): string {
  if (input.addresses.length === 0) throw new RenderRefusal('carp', 'has no virtual address');
  const priority = ROLE_PRIORITY[input.role];
  const name = (address: VrrpAddress) => `bulwark_vhid_${keepalivedInteger(address.vhid, 1, 255, 'vhid')}`;
  const lines = [
    '# Rendered by Bulwark from /cluster/carp; edits are overwritten.',
    'global_defs {',
    `  router_id ${keepalivedWord(input.routerId, 'router_id')}`,
    '  enable_script_security',
    '  script_user root',
    '  vrrp_garp_master_delay 1',
    '  vrrp_garp_master_refresh 60',
    '}',
    'vrrp_track_file bulwark_demotion {',
    `  file "${keepalivedPath(files.demotionFile, 'demotion_file')}"`,
    '  weight -1',
    '  init_file 0',
    '}',
    'vrrp_track_file bulwark_health {',
    `  file "${keepalivedPath(files.healthFile, 'health_file')}"`,
    `  weight -${HEALTH_WEIGHT}`,
    '  init_file 0',
    '}',
    'vrrp_sync_group bulwark {',
    '  group {',
    ...input.addresses.map((address) => `    ${name(address)}`),
    '  }',
    '  sync_group_tracking_weight',
    '  track_file {',
    '    bulwark_demotion',
    '    bulwark_health',
    '  }',
    ...(files.notifyScript ? [`  notify "${keepalivedPath(files.notifyScript, 'notify_script')}"`] : []),
    '}',
  ];
  for (const [index, address] of input.addresses.entries()) {
    const field = `carp.${index}`;
    lines.push(
      `vrrp_instance ${name(address)} {`,
      '  state BACKUP',
      `  interface ${keepalivedWord(address.interface, `${field}.interface`)}`,
      `  virtual_router_id ${keepalivedInteger(address.vhid, 1, 255, `${field}.vhid`)}`,
      `  priority ${keepalivedInteger(priority, 1, 254, 'priority')}`,
      '  advert_int 1',
      '  authentication {',
      '    auth_type PASS',
      `    auth_pass ${keepalivedWord(address.password, `${field}.password`)}`,
      '  }',
      '  virtual_ipaddress {',
      `    ${keepalivedAddress(address.virtualIp, `${field}.virtual_ip`)}/${keepalivedInteger(address.prefix, 0, address.virtualIp.includes(':') ? 128 : 32, `${field}.prefix`)} dev ${keepalivedWord(address.interface, `${field}.interface`)}`,
      '  }',
      '}',
    );
  }
  return `${lines.join('\n')}\n`;
}

/** The notify script of the sync group: conntrackd's primary-backup steps (its documented primary-backup.sh). */
export function renderNotifyScript(conntrackd: { program: string; config: string } | null, stateFile: string): string {
  const path = (value: string, field: string) => `'${keepalivedPath(value, field)}'`;
  const sync = conntrackd ? `${path(conntrackd.program, 'conntrackd')} -C ${path(conntrackd.config, 'conntrackd_config')}` : null;
  return [
    '#!/bin/sh',
    '# Rendered by Bulwark. keepalived calls it as: notify GROUP <name> <MASTER|BACKUP|FAULT|STOP> <priority>',
    `printf '%s\\n' "$3" > ${path(stateFile, 'state_file')}`,
    ...(sync ? [
      'case "$3" in',
      // Take over: commit the flows learnt from the peer into the kernel, flush, resync, and announce.
      `  MASTER) ${sync} -c; ${sync} -f; ${sync} -R; ${sync} -B ;;`,
      // Give away: start from the peer's view of the flows.
      `  BACKUP) ${sync} -t; ${sync} -n ;;`,
      `  FAULT) ${sync} -t ;;`,
      'esac',
    ] : []),
    'exit 0',
    '',
  ].join('\n');
}
