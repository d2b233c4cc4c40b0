/**
 * Renders the time-service configuration for chrony. Pure: configuration in, text out (golden-tested, and
 * checked with `chronyd -p -f FILE` where chrony is installed). PTP settings belong to linuxptp and are not
 * part of this file. Every value goes through chrony-syntax.ts, which refuses anything that is not one word of
 * its expected shape (chrony has no quoting).
 */
import { chronyAddress, chronyDecimal, chronyHost, chronyNumber, chronyPath } from './chrony-syntax.js';

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
  /** Where the NTS key and certificate are installed for chronyd (copies readable by its user), when NTS is on. */
  nts?: { key: string; certificate: string } | null;
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
  input.sources.forEach((source, index) => {
    if (!source.enabled) return;
    const field = `sources.${index}`;
    const address = chronyHost(source.address, `${field}.address`);
    // A name that looks like a pool is asked for several servers.
    const directive = /(^|\.)pool\.ntp\.org$/.test(address) ? 'pool' : 'server';
    lines.push(`${directive} ${address} iburst minpoll ${chronyNumber(source.min_poll, `${field}.min_poll`)} maxpoll ${chronyNumber(source.max_poll, `${field}.max_poll`)}${source.nts ? ' nts' : ''}`);
  });
  lines.push(`driftfile ${chronyPath(paths.driftFile, 'paths.driftFile')}`);
  lines.push(`pidfile ${chronyPath(paths.pidFile, 'paths.pidFile')}`);
  if (config.clock_discipline) {
    // Step the clock when the offset exceeds the threshold during the first three updates, slew afterwards.
    lines.push(`makestep ${chronyDecimal(config.clock_step_threshold_ms / 1000, 3, 'clock_step_threshold_ms')} 3`);
    // Ignore (and log) a measurement that would move the clock by more than the panic threshold.
    lines.push(`maxchange ${chronyDecimal(config.clock_panic_threshold_ms / 1000, 3, 'clock_panic_threshold_ms')} 1 -1`);
  } else {
    lines.push('manual');
  }
  if (config.ntp_enabled) {
    const { address, port } = splitListen(config.ntp_listen);
    lines.push(`port ${chronyNumber(port, 'ntp_listen')}`);
    if (address && address !== '0.0.0.0' && address !== '::') lines.push(`bindaddress ${chronyAddress(address, 'ntp_listen')}`);
    lines.push('allow all');
    // chrony's interval is a power of two in seconds between responses per client.
    const interval = Math.max(-4, Math.min(12, Math.round(Math.log2(Math.max(1 / 16, 1 / config.ntp_rate_limit)))));
    lines.push(`ratelimit interval ${chronyNumber(interval, 'ntp_rate_limit')} burst ${chronyNumber(Math.min(255, config.ntp_rate_burst), 'ntp_rate_burst')}`);
  } else {
    lines.push('port 0');
  }
  if (config.nts_enabled && input.nts) {
    const { port } = splitListen(config.nts_ke_listen);
    lines.push(
      `ntsserverkey ${chronyPath(input.nts.key, 'nts_private_key')}`,
      `ntsservercert ${chronyPath(input.nts.certificate, 'nts_certificate')}`,
      `ntsport ${chronyNumber(port, 'nts_ke_listen')}`,
      `ntsdumpdir ${chronyPath(paths.ntsDumpDir, 'paths.ntsDumpDir')}`,
    );
  }
  lines.push('cmdport 0', `bindcmdaddress ${chronyPath(paths.commandSocket, 'paths.commandSocket')}`);
  lines.push('rtcsync');
  return `${lines.join('\n')}\n`;
}
