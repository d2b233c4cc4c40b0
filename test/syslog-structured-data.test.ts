/**
 * The one encoding of RFC 5424 structured data (src/net/syslog.ts structuredData / sdParamValue), property-tested:
 * hostile strings (quotes, backslashes, brackets, equals signs, spaces, CR/LF/NUL, non-ASCII) in every field of
 * every category's message still give one well-formed RFC 5424 message, parsed here by an independent reader of
 * the grammar of section 6, whose parameter values come back as they were sent (controls as spaces).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatSyslog, octetFrame, structuredData } from '../src/net/syslog.js';
import { syslogMessageOf, SYSLOG_CATEGORIES } from '../src/areas/settings/syslog-messages.js';
import { EVENT_TOPICS } from '../src/core/events.js';
import { parseRfc5424 } from './helpers/rfc5424.js';

const HOSTILE = ['"', '\\', ']', '[', '=', ' ', '\r', '\n', '\u0000', '\t', '@', 'é', '漢', '\u2028', 'a', 'Z', '0', '-', '}', '\\"', '"]', '\\]'];

/** A deterministic pseudo-random generator (the runs are reproducible). */
function random(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function hostileString(next: () => number): string {
  const length = Math.floor(next() * 24);
  let text = '';
  for (let i = 0; i < length; i++) text += HOSTILE[Math.floor(next() * HOSTILE.length)];
  return text;
}

const controlsAsSpaces = (value: string) => value.replace(/[\u0000-\u001f\u007f]/g, ' ');

test('structured data: hostile values round-trip through the one encoding, names stay inside the grammar', () => {
  const next = random(40);
  for (let run = 0; run < 2000; run++) {
    const values = [hostileString(next), hostileString(next), hostileString(next) || 'x'];
    const name = hostileString(next) || 'n';
    const encoded = structuredData([{ id: `${hostileString(next)}@32473`, params: [['a', values[0]], ['b', values[1]], [name, values[2]]] }]);
    const parsed = parseRfc5424(`<134>1 2026-01-01T00:00:00.000Z host app 1 ID ${encoded} msg`);
    const params = parsed.elements[0]?.params ?? [];
    const sent = [['a', values[0]], ['b', values[1]], [name, values[2]]].filter(([, value]) => value !== '');
    assert.deepEqual(params.map(([, value]) => value), sent.map(([, value]) => controlsAsSpaces(value)), `run ${run}: ${JSON.stringify(values)}`);
    assert.equal(parsed.msg, 'msg');
    assert.ok(!/[\r\n\u0000]/.test(encoded), 'one line');
  }
  assert.equal(structuredData([]), '-');
  assert.equal(structuredData([{ id: 'x@1', params: [['a', ''], ['b', null]] }]), '-', 'an element without values is left out');
  assert.equal(structuredData([{ id: 'x@1', params: [['v', 'a"b\\c]d']] }]), '[x@1 v="a\\"b\\\\c\\]d"]');
});

test('every category formats a hostile event as one well-formed RFC 5424 message (and one octet-counted frame)', () => {
  const next = random(5424);
  const topics = { pf: EVENT_TOPICS.packetLog, ids: EVENT_TOPICS.idsAlert, audit: EVENT_TOPICS.audit, app: EVENT_TOPICS.appLog, daemon: EVENT_TOPICS.daemonLog };
  const fields = ['action', 'rule_id', 'interface', 'direction', 'protocol', 'src_addr', 'dst_addr', 'signature', 'src_ip', 'dst_ip', 'category', 'actor', 'client_ip', 'object_kind', 'object_id', 'details', 'msg', 'method', 'path', 'daemon', 'line', 'reqId'];
  for (let run = 0; run < 500; run++) {
    for (const category of SYSLOG_CATEGORIES) {
      const payload: Record<string, unknown> = Object.fromEntries(fields.map((field) => [field, hostileString(next)]));
      Object.assign(payload, { src_port: 1234, dst_port: 80, signature_id: 2100498, severity: 1 + (run % 4), level: [20, 30, 40, 50][run % 4] });
      const message = syslogMessageOf({ topic: topics[category], at: '2026-11-28T10:00:00.000Z', payload }, category);
      const line = formatSyslog({ format: 'rfc5424', facility: 16, hostname_override: hostileString(next) }, message);
      const parsed = parseRfc5424(line);
      assert.equal(parsed.priority, 16 * 8 + message.severity);
      assert.ok(!/[\r\n\u0000]/.test(line), `${category}: one line`);
      for (const element of parsed.elements) assert.match(element.id, /@32473$/);
      const frame = octetFrame(line);
      const space = frame.indexOf(0x20);
      assert.equal(Number(frame.subarray(0, space).toString()), frame.length - space - 1, 'the frame length counts bytes');
    }
  }
});
