/**
 * Renders the time-service configuration for chrony. Pure: configuration in, text out (golden-tested, and
 * checked with `chronyd -p -f FILE` where chrony is installed). PTP settings belong to linuxptp and are not
 * part of this file.
 */

export interface ChronyConfig {
  clock_discipline: boolean;
  clock_step_threshold_ms: number;
  clock_panic_threshold_ms: number;
  ntp_enabled: boolean;
  ntp_listen: string;
  ntp_interfaces: string[];
  ntp_rate_limit: number;
  ntp_rate_burst: number;
  nts_enabled: boolean;
  nts_ke_listen: string;
  nts_certificate: string;
  nts_private_key: string;
}

export interface ChronySource {
  address: string;
  nts: boolean;
  min_poll: number;
  max_poll: number;
  enabled: boolean;
}

export interface ChronyInput {
  config: ChronyConfig;
  sources: ChronySource[];
  paths: { driftFile: string; commandSocket: string; pidFile: string; ntsDumpDir: string };
}

/** `0.0.0.0:123` → {address, port}; `[::]:123` too. */
export function splitListen(listen: string): { address: string; port: number } {
  const bracketed = /^\[([^\]]+)\]:(\d+)$/.exec(listen);
  if (bracketed) return { address: bracketed[1], port: Number(bracketed[2]) };
  const index = listen.lastIndexOf(':');
  return { address: listen.slice(0, index), port: Number(listen.slice(index + 1)) };
}

export function renderChrony(input: ChronyInput): string {
  const { config, paths } = input;
  const lines = ['# Rendered by Bulwark from the time-service configuration. Changes here are overwritten.'];
  const enabled = input.sources.filter((s) => s.enabled);
  for (const source of enabled) {
    // A name that looks like a pool is asked for several servers.
    const directive = /(^|\.)pool\.ntp\.org$/.test(source.address) ? 'pool' : 'server';
    lines.push(`${directive} ${source.address} iburst minpoll ${source.min_poll} maxpoll ${source.max_poll}${source.nts ? ' nts' : ''}`);
  }
  lines.push(`driftfile ${paths.driftFile}`);
  lines.push(`pidfile ${paths.pidFile}`);
  if (config.clock_discipline) {
    // Step the clock when the offset exceeds the threshold during the first three updates, slew afterwards.
    lines.push(`makestep ${(config.clock_step_threshold_ms / 1000).toFixed(3)} 3`);
    // Ignore (and log) a measurement that would move the clock by more than the panic threshold.
    lines.push(`maxchange ${(config.clock_panic_threshold_ms / 1000).toFixed(3)} 1 -1`);
  } else {
    lines.push('manual');
  }
  if (config.ntp_enabled) {
    const { address, port } = splitListen(config.ntp_listen);
    lines.push(`port ${port}`);
    if (address && address !== '0.0.0.0' && address !== '::') lines.push(`bindaddress ${address}`);
    lines.push('allow all');
    // chrony's interval is a power of two in seconds between responses per client.
    const interval = Math.max(-4, Math.min(12, Math.round(Math.log2(Math.max(1 / 16, 1 / config.ntp_rate_limit)))));
    lines.push(`ratelimit interval ${interval} burst ${Math.min(255, config.ntp_rate_burst)}`);
  } else {
    lines.push('port 0');
  }
  if (config.nts_enabled && config.nts_certificate && config.nts_private_key) {
    const { port } = splitListen(config.nts_ke_listen);
    lines.push(`ntsserverkey ${config.nts_private_key}`, `ntsservercert ${config.nts_certificate}`, `ntsport ${port}`, `ntsdumpdir ${paths.ntsDumpDir}`);
  }
  lines.push('cmdport 0', `bindcmdaddress ${paths.commandSocket}`);
  lines.push('rtcsync');
  return `${lines.join('\n')}\n`;
}
