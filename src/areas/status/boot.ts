/**
 * GET /status `boot`: what the boot step (install/bulwark-boot.sh) loaded before the network came up, read from the
 * record it leaves in `<data-dir>/boot/last-boot.json`. The tool's own error line stays in that file for the
 * administrator; a client gets the outcome, the reason in words and the refused line's number only.
 */
import { readFileSync } from 'node:fs';
import { Type, type Static } from 'typebox';
import type { AppContext } from '../../context.js';
import { dataPath } from '../common/data-files.js';
import { BOOT_DIR, LAST_BOOT_FILE } from '../packet-filter/boot-ruleset.js';

export const BootStatus = Type.Object({
  loaded: Type.Union([Type.Literal('applied'), Type.Literal('fallback'), Type.Literal('none')], {
    description: '`applied`: the boot step loaded the last applied ruleset; `fallback`: it was missing or refused and the safe fallback was loaded; `none`: nothing was loaded (the boot step has not run, or even the fallback was refused)',
  }),
  reason: Type.String({ description: 'why, in words' }),
  at: Type.Union([Type.String(), Type.Null()], { description: 'when the boot step ran; null when it has not' }),
  refused_line: Type.Optional(Type.Integer({ description: 'the line of the kept ruleset the packet-filter tool refused (the file keeps its message)' })),
}, { description: 'what the boot step loaded before the network came up (docs/appliance.md)' });
export type BootStatus = Static<typeof BootStatus>;

interface LastBoot {
  loaded?: unknown;
  file?: unknown;
  reason?: unknown;
  ruleset_error_line?: unknown;
  at?: unknown;
}

export function readBootStatus(context: AppContext): BootStatus {
  const path = dataPath(context.config.dataDir, BOOT_DIR, LAST_BOOT_FILE);
  let record: LastBoot;
  try {
    record = JSON.parse(readFileSync(path, 'utf8')) as LastBoot;
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    return { loaded: 'none', at: null, reason: missing ? 'the boot step has not run for this data directory' : `the boot step's record ${path} cannot be read` };
  }
  const at = typeof record.at === 'string' ? record.at : null;
  const line = typeof record.ruleset_error_line === 'number' && Number.isInteger(record.ruleset_error_line) ? record.ruleset_error_line : undefined;
  const why = record.reason === 'refused'
    ? `the packet filter refused the last applied ruleset${line === undefined ? '' : ` at line ${line}`}`
    : 'no applied ruleset was kept (nothing applied yet, or the file is gone)';
  const builtin = record.file === 'builtin' ? ' (the built-in one: no rendered fallback was usable)' : '';
  switch (record.loaded) {
    case 'applied':
      return { loaded: 'applied', at, reason: 'the last applied ruleset was loaded before the network came up' };
    case 'fallback':
      return { loaded: 'fallback', at, reason: `${why}; the safe fallback was loaded${builtin}`, ...(line === undefined ? {} : { refused_line: line }) };
    default:
      return { loaded: 'none', at, reason: `${why}, and the fallback was refused too: nothing was loaded at boot`, ...(line === undefined ? {} : { refused_line: line }) };
  }
}
