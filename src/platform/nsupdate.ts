import { findProgram } from './daemon-tools.js';
import { runUnprivileged } from './probe-account.js';
import { describeMissing, missingTool } from './debian-packages.js';
import { unavailable } from '../core/errors.js';

/**
 * Sends an RFC 2136 update with nsupdate (bind9-dnsutils), the script (which carries the TSIG secret) on
 * stdin, never in the arguments, run as the unprivileged probe account (no script line could make it read
 * root's files). Throws with nsupdate's one-line reason when the server refuses it.
 */
export async function sendDnsUpdate(script: string): Promise<void> {
  const program = findProgram('nsupdate');
  if (!program) throw unavailable(describeMissing(missingTool('nsupdate')));
  const result = await runUnprivileged(program, ['-v'], { input: script, timeoutMs: 30_000 });
  if (result.code !== 0) {
    const reason = `${result.stderr}\n${result.stdout}`.split('\n').map((line) => line.replace(/[^\x20-\x7e]/g, '').trim()).filter(Boolean).at(-1);
    throw new Error(`the DNS server refused the update${reason ? `: ${reason.slice(0, 200)}` : ''}`);
  }
}
