/**
 * Fake command-line tools for the FreeBSD driver tests: shell scripts in a temporary directory put first on PATH,
 * each recording `<name> <args>` as one numbered file (so the order survives) before its own behaviour runs.
 */
import { after } from 'node:test';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface FakeTools {
  /** The directory holding the tools (and whatever files their behaviour writes: `$dir` inside a behaviour). */
  dir: string;
  /** (Re)writes tool `name`: it records its call, runs `behaviour` (sh, `$dir` set) and exits 0 unless that exits. */
  fake(name: string, behaviour: string): void;
  /** The calls recorded since the last read, oldest first, each path in `replace` shown as its name; forgets them. */
  calls(replace?: Record<string, string>): string[];
}

/** A fresh tool directory, first on PATH for the rest of the test file, removed after it. */
export function fakeTools(prefix: string): FakeTools {
  const dir = mkdtempSync(join(tmpdir(), `bulwark-fake-${prefix}-`));
  after(() => rmSync(dir, { recursive: true, force: true }));
  process.env.PATH = `${dir}:${process.env.PATH}`;
  return {
    dir,
    fake(name, behaviour) {
      writeFileSync(join(dir, name), `#!/bin/sh
dir="${dir}"
n=$(ls "$dir"/call-* 2>/dev/null | wc -l)
printf '%s\\n' "${name} $*" > "$dir/call-$(printf '%04d' "$n")"
${behaviour}
exit 0
`);
      chmodSync(join(dir, name), 0o755);
    },
    calls(replace = {}) {
      const files = readdirSync(dir).filter((f) => f.startsWith('call-')).sort();
      const lines = files.map((f) => readFileSync(join(dir, f), 'utf8').trim());
      for (const f of files) rmSync(join(dir, f));
      return lines.map((line) => Object.entries(replace).reduce((text, [path, name]) => text.replaceAll(path, name), line));
    },
  };
}
