import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LastCompile } from '../src/compile/last-compile.js';
import { compileNftables } from '../src/compile/nftables.js';
import type { FirewallConfig } from '../src/compile/firewall-types.js';
import { NO_GEOIP } from '../src/compile/geoip-sets.js';
import { alias, config, rule } from './helpers/firewall-fixtures.js';
import { adminApi } from './helpers/admin-api.js';
import { packetFilterOf } from './helpers/areas.js';


/** A LastCompile whose compiler counts the compiles it really runs. */
function counted() {
  const last = new LastCompile();
  let compiles = 0;
  const compile = (c: FirewallConfig, dialect = 'nftables') => last.compile(c, dialect, (input) => {
    compiles++;
    return compileNftables(input);
  });
  return { compile, compiles: () => compiles };
}

test('the last compile is handed out again only while every input is the same', () => {
  const base = config({
    rules: [rule({ id: 'r1', src: '<web>', protocol: 'tcp', dport: 443 })],
    aliases: [alias('web', 'network', ['10.0.0.0/24'])],
    urlTables: { feed: ['192.0.2.0/24'] },
  });
  const { compile, compiles } = counted();
  const first = compile(base);
  assert.equal(compile({ ...base }), first, 'a new config object holding the same lists and values');
  assert.equal(compile({ ...base, system: { ...base.system, antiLockoutInterfaces: [...base.system.antiLockoutInterfaces] } }), first, 'system inputs are compared by content');
  assert.equal(compile({ ...base, urlTables: { ...base.urlTables } }), first, 'the same url_table arrays in a new record');
  assert.equal(compiles(), 1);

  // Each change of an input compiles again (and what it compiles is what a fresh compile gives).
  const changes: [string, FirewallConfig][] = [
    ['rules', { ...base, rules: [rule({ id: 'r1', src: '<web>', protocol: 'tcp', dport: 8443 })] }],
    ['aliases', { ...base, aliases: [alias('web', 'network', ['10.0.1.0/24'])] }],
    ['schedules', { ...base, schedules: [...base.schedules] }],
    ['nat', { ...base, nat: [...base.nat] }],
    ['settings', { ...base, settings: { block_logging: !base.settings.block_logging } }],
    ['system', { ...base, system: { ...base.system, antiLockoutInterfaces: ['lan0'] } }],
    ['time', { ...base, time: { ...base.time, minute: base.time.minute + 1 } }],
    ['urlTables', { ...base, urlTables: { feed: ['192.0.2.0/24'] } }],
    ['geoip', { ...base, geoip: { ...NO_GEOIP } }],
  ];
  for (const [field, changed] of changes) {
    const before = compiles();
    const compiled = compile(changed);
    assert.equal(compiles(), before + 1, `${field} changed: compiled again`);
    assert.equal(compiled.text, compileNftables(changed).text, `${field}: the text of a fresh compile`);
    compile(base);
  }
  const before = compiles();
  compile(base, 'pf');
  assert.equal(compiles(), before + 1, 'another dialect compiles again');
});

test('a compile that throws is not remembered', () => {
  const last = new LastCompile();
  const base = config();
  assert.throws(() => last.compile(base, 'nftables', () => {
    throw new Error('refused');
  }), /refused/);
  let compiles = 0;
  last.compile(base, 'nftables', (input) => {
    compiles++;
    return compileNftables(input);
  });
  assert.equal(compiles, 1, 'the same config compiles after the failure');
});

const api = adminApi();

test('the stored configuration is compiled once writes pause, and the reload then finds it compiled', async () => {
  // Counted at the prototype: the service's own LastCompile runs through it.
  const original = LastCompile.prototype.compile;
  let compiles = 0;
  LastCompile.prototype.compile = function (this: LastCompile, c, dialect, compiler) {
    return original.call(this, c, dialect, (input) => {
      compiles++;
      return compiler(input);
    });
  };
  try {
    const { store } = api.t.app.context;
    const compiledAhead = () => packetFilterOf(api.t.app).compiledAhead();
    for (let i = 0; i < 30; i++) store.insert('alias', { name: `ahead${i}`, alias_type: 'host', description: null, enabled: true, entries: [`10.2.0.${i}`] });
    assert.equal(compiles, 0, 'not while the burst goes on');
    await compiledAhead();
    assert.equal(compiles, 1, 'once, after the burst');
    const reload = await api.call('POST', '/api/v1/reload');
    assert.equal(reload.status, 200, JSON.stringify(reload.body));
    assert.equal(compiles, 1, 'the reload found it compiled');

    const created = await api.call('POST', '/api/v1/rules', { action: 'pass', direction: 'in', protocol: 'tcp', rule_match: { src_addr: '<ahead3>', dst_addr: 'any', dst_port: { start: 22, end: 22 } } });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    await compiledAhead();
    assert.equal(compiles, 2, 'the new rule compiled when the write paused');
    const system = await api.call('GET', '/api/v1/rules/system');
    assert.equal(system.status, 200);
    assert.equal(compiles, 2, 'an inspection of the same configuration compiles nothing');
    const again = await api.call('POST', '/api/v1/reload');
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.equal(compiles, 2);
    assert.equal((again.body as { rules: number }).rules, 1, 'and what it applied holds the new rule');
  } finally {
    LastCompile.prototype.compile = original;
  }
});
