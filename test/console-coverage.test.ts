import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { API_ONLY, NOT_YET_IN_CONSOLE, type ApiOnlyEntry } from './console-api-only.js';
import { sharedFile } from './helpers/shared.js';

/**
 * Console coverage (issue 34 item 5): every operation of the API spec belongs to a group that a console page calls,
 * or is listed in test/console-api-only.ts with the reason it has no page. The console's calls are found by reading
 * web/src for the API paths it names (`api.get('/time/status')`, `path="/dns/resolver/hosts"`, `/api/v1/ws`), not by
 * trusting a hand-kept list.
 */

const ROOT = join(import.meta.dirname, '..');
// Through the shared helper: a clone made elsewhere finds ../shared through BULWARK_SHARED_DIR (.ci/run sets it).
const SPEC_FILE = sharedFile('spec/endpoints.tsv');
const SPEC = SPEC_FILE.path;
const WEB = join(ROOT, 'web', 'src');
/** Files whose `path` props and fields name console routes, not API paths: the route /rules is not a call to the API. */
const ROUTE_FILES = new Set(['app.tsx', 'layout/nav-items.ts']);
/** What comes before a literal naming a console route anywhere (a link, a navigation). */
const ROUTE_CONTEXT = /(href=|to=|navigate\(|route\()$/;
const ROUTE_FILE_CONTEXT = /(path=|path: )$/;

interface Operation {
  method: string;
  path: string;
}

function operations(): Operation[] {
  const lines = readFileSync(SPEC, 'utf8').split('\n').slice(1).filter((line) => line.trim() !== '');
  return lines.map((line) => {
    const [, method, path] = line.split('\t');
    return { method: method!, path: path!.replace(/^\/api\/v1/, '') };
  });
}

/**
 * The group of an API path: its first segment and, when the second is a name rather than an id, the second too
 * (`/dns/resolver/hosts/{id}` → `/dns/resolver`, `/rules/{id}` → `/rules`). Finer than the first segment alone, so
 * that reading `/time/status` does not count the time sources as having a page.
 */
export function groupOf(path: string): string {
  const segments = path.split('/').filter((segment) => segment !== '');
  if (segments.length === 0) return '/';
  const second = segments[1];
  return second === undefined || second.startsWith('{') || second.startsWith('$') ? `/${segments[0]}` : `/${segments[0]}/${second}`;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return /\.(ts|tsx)$/.test(name) ? [full] : [];
  });
}

/** The API paths the console's source names: string literals starting with `/`, and anything after `/api/v1`. */
function consolePaths(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const file of sourceFiles(WEB)) {
    const name = relative(WEB, file).split('\\').join('/');
    const text = readFileSync(file, 'utf8');
    const literals = [...text.matchAll(/['"`](\/[A-Za-z][^'"`\s?]*)/g)]
      .filter((m) => {
        const before = text.slice(Math.max(0, m.index - 12), m.index);
        return !ROUTE_CONTEXT.test(before) && !(ROUTE_FILES.has(name) && ROUTE_FILE_CONTEXT.test(before));
      })
      .map((m) => m[1]!);
    const prefixed = [...text.matchAll(/\/api\/v1(\/[A-Za-z][^'"`\s?]*)/g)].map((m) => m[1]!);
    for (const path of [...literals, ...prefixed]) {
      const clean = path.replace(/^\/api\/v1/, '');
      const files = found.get(clean) ?? [];
      if (!files.includes(name)) files.push(name);
      found.set(clean, files);
    }
  }
  return found;
}

function coveredGroups(): Set<string> {
  const groups = new Set(operations().map((op) => groupOf(op.path)));
  const covered = new Set<string>();
  for (const path of consolePaths().keys()) {
    const group = groupOf(path);
    if (groups.has(group)) covered.add(group);
  }
  return covered;
}

/** An entry names a group (`/ai/analyze`) or one operation (`GET /about`). */
function names(entry: ApiOnlyEntry, op: Operation): boolean {
  return entry.operation === groupOf(op.path) || entry.operation === `${op.method} ${op.path}`;
}

const LISTED = [...API_ONLY, ...NOT_YET_IN_CONSOLE];

function listedAsApiOnly(op: Operation): boolean {
  return LISTED.some((entry) => names(entry, op));
}

test('every operation of the spec has a console page or is listed as API-only with a reason', { skip: SPEC_FILE.skip }, () => {
  const covered = coveredGroups();
  const missing = operations()
    .filter((op) => !covered.has(groupOf(op.path)) && !listedAsApiOnly(op))
    .map((op) => `${op.method} ${op.path} (group ${groupOf(op.path)})`);
  assert.deepEqual(missing, [], `operations with neither a console page nor an API-only entry:\n${missing.join('\n')}`);
});

test('the API-only and not-yet lists are explained and current: each entry names operations that no page uses', { skip: SPEC_FILE.skip }, () => {
  const covered = coveredGroups();
  const ops = operations();
  for (const entry of LISTED) {
    assert.ok(entry.reason.trim().length >= 20, `${entry.operation}: give the reason it has no page`);
    const matching = ops.filter((op) => names(entry, op));
    assert.ok(matching.length > 0, `${entry.operation} names no operation of the spec`);
    for (const op of matching) {
      assert.ok(!covered.has(groupOf(op.path)), `${entry.operation}: a console page now uses ${groupOf(op.path)}; take it off the API-only list`);
    }
  }
  assert.equal(new Set(LISTED.map((entry) => entry.operation)).size, LISTED.length, 'an entry is listed twice');
  assert.ok(API_ONLY.length <= 12, 'the API-only list is meant to stay short: put an operator\'s work in the console');
});

test('the scan finds the calls the console is known to make', () => {
  const paths = consolePaths();
  // One of each way the console names an API path: a direct call, a section's path prop, a socket URL.
  for (const known of ['/rules/simulate', '/dns/resolver/hosts', '/ws', '/pending/stream']) {
    assert.ok(paths.has(known), `the scan no longer sees ${known}; the console's way of calling the API changed`);
  }
  // Route files are not API calls.
  assert.ok(!paths.get('/configuration'), 'a console route was read as an API call');
});
