import { createHash } from 'node:crypto';
import type { KernelState } from './packet-filter.js';
import { sha256Hex } from '../core/crypto.js';

/**
 * A kernel state from named objects, each a list of canonical lines (order kept where it matters, i.e. rules;
 * the caller sorts what has no order, i.e. set elements). Objects are taken in name order, so the order the
 * kernel lists them in (creation order, which a delta changes) does not count.
 */
export function kernelState(objects: ReadonlyMap<string, { lines: readonly string[]; size: number }>): KernelState {
  const digests: KernelState['objects'] = {};
  for (const name of [...objects.keys()].sort()) {
    const { lines, size } = objects.get(name)!;
    digests[name] = { size, digest: sha256Hex(`${name}\n${lines.join('\n')}`) };
  }
  return { fingerprint: fingerprintOf(digests), objects: digests };
}

/** `state` with the named objects as `read` holds them, and without those `read` lacks (a partial read-back). */
export function withObjectsRead(state: KernelState, names: readonly string[], read: KernelState): KernelState {
  const objects = { ...state.objects };
  for (const name of names) {
    if (read.objects[name]) objects[name] = read.objects[name];
    else delete objects[name];
  }
  return { fingerprint: fingerprintOf(objects), objects };
}

function fingerprintOf(objects: KernelState['objects']): string {
  const whole = createHash('sha256');
  for (const name of Object.keys(objects).sort()) whole.update(`${name} ${objects[name].digest}\n`);
  return whole.digest('hex');
}

/**
 * What differs between the state recorded after the last apply and the one read now, in a few words each
 * (`chain filter_in: 12 entries, 13 expected`, `set alias_web_v4 missing`), at most `limit` of them.
 */
export function stateDifferences(expected: KernelState, actual: KernelState, limit = 8): string[] {
  const differences: string[] = [];
  const names = [...new Set([...Object.keys(expected.objects), ...Object.keys(actual.objects)])].sort();
  for (const name of names) {
    const want = expected.objects[name];
    const have = actual.objects[name];
    if (want && !have) differences.push(`${name} missing`);
    else if (!want && have) differences.push(`${name} added (${have.size} entries)`);
    else if (want!.digest !== have!.digest) {
      differences.push(want!.size === have!.size ? `${name} changed (${have!.size} entries)` : `${name}: ${have!.size} entries, ${want!.size} expected`);
    }
  }
  return differences.length > limit ? [...differences.slice(0, limit), `and ${differences.length - limit} more`] : differences;
}
