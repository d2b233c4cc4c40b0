/**
 * The health checks that look at a service rather than the network path: `http_get` (an HTTP(S) URL answers 2xx,
 * through the outbound guard with the check's own address allowed) and `process_running` (a process of that name
 * runs on this node). Their outcome feeds the VRRP priority as the other checks' does.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { outboundFetch } from '../../net/outbound.js';
import { runCommand } from '../../platform/exec.js';
import { findProgram } from '../../platform/daemon-tools.js';

/** A process name as the kernel keeps it (comm: at most 15 characters), one plain word. */
export const PROCESS_NAME_PATTERN = /^[A-Za-z0-9._+:-]{1,15}$/;
/** A health check reads at most this much of the answer: it only needs the status. */
const HTTP_CHECK_MAX_BYTES = 64 * 1024;

/** An http(s) URL whose host is an IP address (no name to resolve: the check must not depend on DNS), or null. */
export function httpCheckUrl(target: string): URL | null {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (url.username || url.password) return null;
  return isIP(url.hostname.replace(/^\[|\]$/g, '')) ? url : null;
}

/** Whether the URL answers with a 2xx status within the timeout (redirects are not followed). */
export async function httpAnswers(target: string, timeoutSecs: number): Promise<boolean> {
  const url = httpCheckUrl(target);
  if (!url) return false;
  const response = await outboundFetch(url.href, { method: 'GET' }, {
    allowList: [url.hostname.replace(/^\[|\]$/g, '')], allowHttp: true, maxRedirects: 0, timeoutMs: timeoutSecs * 1000, maxBytes: HTTP_CHECK_MAX_BYTES,
  });
  await response.arrayBuffer().catch(() => undefined);
  return response.status >= 200 && response.status < 300;
}

/** Whether a process of that name runs: /proc where there is one (linux), else `pgrep -x` (FreeBSD). */
export async function processRunning(name: string): Promise<boolean> {
  if (!PROCESS_NAME_PATTERN.test(name)) return false;
  if (existsSync('/proc/self/comm')) {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        if (readFileSync(`/proc/${entry}/comm`, 'utf8').trimEnd() === name) return true;
      } catch {
        // the process ended while the list was read
      }
    }
    return false;
  }
  const pgrep = findProgram('pgrep');
  if (!pgrep) return false;
  return (await runCommand(pgrep, ['-x', '--', name], { timeoutMs: 5000 })).code === 0;
}
