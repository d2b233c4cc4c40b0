/**
 * Property test for the Prometheus exposition writer (src/metrics/prometheus-text.ts), the one function every
 * label value of GET /metrics/prometheus passes through: hostile strings (quotes, backslashes, line feeds,
 * braces, `#` comments, sample-looking text) stay one label value on one sample line, and read back unchanged
 * with the format's own unescaping. promtool (Debian `prometheus`) accepts the result.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { PrometheusText } from '../../src/metrics/prometheus-text.js';
import { systemSkip } from '../helpers/system-skip.js';
import { findProgram } from '../../src/platform/daemon-tools.js';

const PIECES = ['"', '\\', '\n', '\r', '}', '{', ',', '=', '#', ' ', 'TYPE', 'HELP', 'x="1"', 'bulwark_fake 1', '\\n', '\\"', 'é', '😀', '\t', '\u2028', 'a'];

/** A deterministic pseudo-random hostile string (a small LCG, so a failure reproduces). */
function hostile(seed: number): string {
  let state = seed * 2654435761 >>> 0;
  const next = () => (state = (state * 1103515245 + 12345) >>> 0);
  const length = 1 + (next() % 12);
  return Array.from({ length }, () => PIECES[next() % PIECES.length]).join('');
}

/** Reads `name{a="…",b="…"} value` with the exposition format's escapes; null when the line is not one sample. */
function parseSample(line: string): { name: string; labels: Record<string, string>; value: string } | null {
  const head = /^([a-zA-Z_:][a-zA-Z0-9_:]*)\{/.exec(line);
  if (!head) return null;
  const labels: Record<string, string> = {};
  let at = head[0].length;
  while (line[at] !== '}') {
    const name = /^([a-zA-Z_][a-zA-Z0-9_]*)="/.exec(line.slice(at));
    if (!name) return null;
    at += name[0].length;
    let value = '';
    for (;;) {
      const c = line[at++];
      if (c === undefined) return null;
      if (c === '"') break;
      if (c === '\\') {
        const e = line[at++];
        if (e === 'n') value += '\n';
        else if (e === '\\' || e === '"') value += e;
        else return null;
      } else value += c;
    }
    labels[name[1]] = value;
    if (line[at] === ',') at++;
  }
  const rest = line.slice(at + 1);
  if (!/^ [^ ]+$/.test(rest)) return null;
  return { name: head[1], labels, value: rest.slice(1) };
}

function exposition(values: string[]): string {
  return new PrometheusText()
    .family('bulwark_probe_total', 'counter', 'Hostile help \\ with a\nline feed.', values.map((v, i) => ({ labels: { name: v, index: String(i) }, value: i })))
    .text();
}

test('hostile label values stay one label on one line and read back unchanged', () => {
  const values = Array.from({ length: 2000 }, (_, i) => hostile(i + 1));
  const lines = exposition(values).trimEnd().split('\n');
  assert.equal(lines.length, 2 + values.length, 'HELP, TYPE and one line per sample');
  assert.ok(lines[0].startsWith('# HELP bulwark_probe_total ') && !lines[0].includes('\n'));
  assert.equal(lines[1], '# TYPE bulwark_probe_total counter');
  values.forEach((value, i) => {
    const parsed = parseSample(lines[2 + i]);
    assert.ok(parsed, `line ${lines[2 + i]} is one sample`);
    assert.deepEqual(parsed, { name: 'bulwark_probe_total', labels: { name: value, index: String(i) }, value: String(i) }, JSON.stringify(value));
  });
});

test('names that the format cannot carry are refused, never written', () => {
  assert.throws(() => new PrometheusText().family('bad name', 'gauge', 'x', [{ value: 1 }]), /metric name/);
  assert.throws(() => new PrometheusText().family('ok', 'gauge', 'x', [{ labels: { 'a"b': 'v' }, value: 1 }]), /label name/);
  assert.throws(() => new PrometheusText().family('ok', 'gauge', 'x', [{ labels: { __name__: 'v' }, value: 1 }]), /label name/);
});

test('promtool accepts hostile label values', { skip: systemSkip('the promtool check', { programs: ['promtool'] }) }, () => {
  const text = exposition(Array.from({ length: 200 }, (_, i) => hostile(i + 7)));
  const checked = spawnSync(findProgram('promtool')!, ['check', 'metrics'], { input: text, encoding: 'utf8' });
  assert.equal(checked.status, 0, `${checked.stdout}${checked.stderr}`);
});
