import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { json } from './helpers/app.js';
import { startAreaApp, type AreaApp } from './helpers/area-app.js';
import { sharedFile } from './helpers/shared.js';
import { parseRuleLine, parseRulesFile, splitOptions } from '../src/areas/ids/rules-parser.js';
import { ftsQuery, payloadExcerpt } from '../src/areas/ids/service.js';
import { dashboardOf, idsOf } from './helpers/areas.js';

const suricata = sharedFile('fixtures/suricata');
let t: AreaApp;
before(async () => {
  t = await startAreaApp();
});
after(() => t.close());

test('rule parser: options split on unquoted semicolons, commented rules are disabled rules, severity from priority/classtype', () => {
  assert.deepEqual(splitOptions('msg:"a; b"; content:"x\\;y"; nocase; sid:1;'), [['msg', '"a; b"'], ['content', '"x\\;y"'], ['nocase', null], ['sid', '1']]);
  const rule = parseRuleLine('alert http any any -> any any (msg:"ET TEST \\"quoted\\""; classtype:trojan-activity; sid:123; rev:4; metadata:created_at 2020_01_01, deployment Perimeter;)')!;
  assert.equal(rule.sid, 123);
  assert.equal(rule.rev, 4);
  assert.equal(rule.msg, 'ET TEST "quoted"');
  assert.equal(rule.severity, 1);
  assert.equal(rule.metadata.deployment, 'Perimeter');
  assert.equal(parseRuleLine('# alert tcp any any -> any any (msg:"off"; priority:3; sid:9;)')!.enabled, false);
  assert.equal(parseRuleLine('# This is a comment'), null);
  assert.equal(parseRuleLine('alert tcp any any -> any any (msg:"x"; priority:2; sid:10;)')!.severity, 2);
  assert.equal(ftsQuery('ET SCAN "nmap" OR (x'), '"ET"* "SCAN"* "nmap"* "OR"* "x"*');
  assert.equal(payloadExcerpt(Buffer.from('GET / HTTP/1.1').toString('base64')), 'GET / HTTP/1.1');
  assert.equal(payloadExcerpt(Buffer.from([0, 1, 255]).toString('base64')), '00 01 FF');
});

test('every rule of the shared Suricata fixtures parses with its SID', { skip: suricata.skip }, () => {
  let rules = 0;
  for (const dir of ['et-open-2025', 'oisf-rules']) {
    for (const file of readdirSync(join(suricata.path, dir)).filter((f) => f.endsWith('.rules'))) {
      const text = readFileSync(join(suricata.path, dir, file), 'utf8');
      const expected = text.split('\n').filter((line) => /^#? ?(alert|drop|pass|reject)\s.*sid:\d+/.test(line)).length;
      const parsed = parseRulesFile(text);
      assert.equal(parsed.length, expected, file);
      assert.ok(parsed.every((rule) => rule.sid !== null && rule.sid > 0), file);
      rules += parsed.length;
    }
  }
  assert.ok(rules > 7000, `${rules} rules`);
});

test('config: defaults, partial update, validation naming the field', async () => {
  const config = json(await t.request('GET', '/api/v1/ids/config'));
  assert.equal(config.mode, 'disabled');
  assert.deepEqual(config.home_net, ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16']);
  const updated = json(await t.request('PUT', '/api/v1/ids/config', { mode: 'ids', interfaces: ['eth1'] }));
  assert.equal(updated.mode, 'ids');
  assert.equal(updated.alert_retention_days, 30);
  const bad = await t.request('PUT', '/api/v1/ids/config', { mode: 'loud' });
  assert.equal(bad.statusCode, 400);
  assert.deepEqual(Object.keys(json(bad)), ['error']);
  assert.match(json(bad).error, /body\.mode must be one of: ids, ips, disabled/);
  const badNet = await t.request('PUT', '/api/v1/ids/config', { home_net: ['not-a-net'] });
  assert.equal(badNet.statusCode, 400);
  assert.match(json(badNet).error, /home_net/);
  assert.equal((await t.request('PUT', '/api/v1/ids/config', { worker_count: 65 })).statusCode, 400);
});

test('rulesets: seeded, create with rules from the fixtures, FTS search finds SIDs, overrides, reload, delete', { skip: suricata.skip }, async () => {
  const seeded = json(await t.request('GET', '/api/v1/ids/rulesets'));
  assert.ok(seeded.some((r: { id: string }) => r.id === 'a0000000-0000-0000-0000-000000000001'));

  const scanText = readFileSync(join(suricata.path, 'et-open-2025/emerging-scan.rules'), 'utf8');
  const created = await t.request('POST', '/api/v1/ids/rulesets', { name: 'ET scan', rule_format: 'suricata', rules_text: scanText });
  assert.equal(created.statusCode, 201, created.body);
  const scan = json(created);
  assert.equal(scan.rule_count, parseRulesFile(scanText).length);
  assert.ok(scan.last_updated);
  const custom = json(await t.request('POST', '/api/v1/ids/rulesets', { name: 'custom', rule_format: 'suricata', rules_text: readFileSync(join(suricata.path, 'tunnel-testing-custom.rules'), 'utf8') }));
  assert.ok(custom.rule_count > 0);

  // Full-text search: a word from a message finds its SID; a SID finds its rule; nonsense finds nothing.
  const nmap = await t.request('GET', '/api/v1/ids/rules/search?q=nmap&limit=500');
  assert.equal(nmap.statusCode, 200);
  const nmapRules = json(nmap);
  assert.ok(nmapRules.length > 0);
  assert.ok(nmapRules.every((r: { msg: string; rule_text: string }) => /nmap/i.test(r.msg + r.rule_text)));
  assert.equal(Number(nmap.headers['x-total-count']), nmapRules.length);
  const amap = json(await t.request('GET', '/api/v1/ids/rules/search?q=Amap%20TCP%20Service'));
  assert.equal(amap[0].sid, 2010371);
  const bySid = json(await t.request('GET', '/api/v1/ids/rules/search?q=2010371'));
  assert.equal(bySid[0].sid, 2010371);
  assert.equal(json(await t.request('GET', '/api/v1/ids/rules?search=Amap%20TCP')).length, 1);
  assert.equal(json(await t.request('GET', '/api/v1/ids/rules/search?q=zzzqqqxxx')).length, 0);
  assert.equal((await t.request('GET', '/api/v1/ids/rules/search?q=%22%28')).statusCode, 400);
  assert.equal((await t.request('GET', '/api/v1/ids/rules/search')).statusCode, 400);

  const page = await t.request('GET', `/api/v1/ids/rules?ruleset_id=${scan.id}&limit=10&offset=5`);
  assert.equal(json(page).length, 10);
  assert.equal(page.headers['x-total-count'], String(scan.rule_count));

  // Override one SID, disable another, and see both in the compiled rule file after reload.
  const rule = amap[0];
  const overridden = json(await t.request('PUT', `/api/v1/ids/rules/${rule.id}`, { action_override: 'drop' }));
  assert.equal(overridden.action_override, 'drop');
  const other = json(await t.request('GET', '/api/v1/ids/rules/search?q=nmap'))[0];
  assert.equal(json(await t.request('PUT', `/api/v1/ids/rules/${other.id}`, { enabled: false })).enabled, false);
  assert.equal((await t.request('PUT', `/api/v1/ids/rules/${rule.id}`, { action_override: 'explode' })).statusCode, 400);
  const reload = json(await t.request('POST', '/api/v1/ids/reload'));
  const compiled = readFileSync(join(t.dataDir, 'ids/bulwark.rules'), 'utf8');
  assert.match(compiled, /^drop tcp .*sid:2010371;/m);
  assert.ok(!compiled.includes(`sid:${other.sid};`));
  assert.equal(reload.loaded_rules, compiled.trim().split('\n').length);
  const stats = json(await t.request('GET', '/api/v1/ids/stats'));
  assert.equal(stats.running, true);
  assert.equal(stats.simulated, true);
  assert.equal(stats.loaded_rules, reload.loaded_rules);

  // Reinstalling keeps overrides of SIDs that remain.
  json(await t.request('PUT', `/api/v1/ids/rulesets/${scan.id}`, { rules_text: scanText }));
  assert.equal(json(await t.request('GET', '/api/v1/ids/rules/search?q=2010371'))[0].action_override, 'drop');

  const disabled = json(await t.request('PUT', `/api/v1/ids/rulesets/${scan.id}`, { enabled: false }));
  assert.equal(disabled.enabled, false);
  assert.equal(json(await t.request('GET', '/api/v1/ids/rules?enabled=true&limit=10000')).every((r: { ruleset_id: string }) => r.ruleset_id !== scan.id), true);
  assert.equal((await t.request('POST', '/api/v1/ids/rulesets', { name: 'bad', rule_format: 'snort' })).statusCode, 400);
  assert.equal((await t.request('POST', '/api/v1/ids/rulesets', { name: 'ET scan', rule_format: 'suricata' })).statusCode, 409);

  assert.equal((await t.request('DELETE', `/api/v1/ids/rulesets/${scan.id}`)).statusCode, 204);
  assert.equal(json(await t.request('GET', `/api/v1/ids/rules?ruleset_id=${scan.id}`)).length, 0);
  assert.equal((await t.request('GET', `/api/v1/ids/rules/${rule.id}`)).statusCode, 404);
});

test('a ruleset download to a blocked address is refused by the outbound guard and kept in last_error', async () => {
  const created = json(await t.request('POST', '/api/v1/ids/rulesets', { name: 'local', rule_format: 'suricata', source_url: 'https://127.0.0.1:9/x.rules' }));
  assert.equal(created.rule_count, 0);
  assert.match(created.last_error, /blocked address/);
  assert.equal((await t.request('POST', '/api/v1/ids/rulesets', { name: 'plain', rule_format: 'suricata', source_url: 'http://example.org/x.rules' })).statusCode, 400);
});

test('EVE alerts are ingested, suppressions silence them, alerts are listed, classified, acknowledged and purged', { skip: suricata.skip }, async () => {
  const ids = idsOf(t.app);
  const suppression = await t.request('POST', '/api/v1/ids/suppressions', { sid: 2200073, suppress_type: 'src', ip_cidr: '192.168.230.0/24' });
  assert.equal(suppression.statusCode, 201, suppression.body);
  assert.equal((await t.request('POST', '/api/v1/ids/suppressions', { sid: 1, suppress_type: 'src', ip_cidr: 'bogus' })).statusCode, 400);
  assert.equal((await t.request('POST', '/api/v1/ids/suppressions', { sid: 1, suppress_type: 'sideways' })).statusCode, 400);
  assert.equal(json(await t.request('GET', '/api/v1/ids/suppressions')).length, 1);

  const eve = readFileSync(join(suricata.path, 'eve/zeus-analysis-eve.head2500.json'), 'utf8');
  const expectedAlerts = eve.split('\n').filter((l) => l.includes('"event_type":"alert"'));
  const silenced = expectedAlerts.filter((l) => l.includes('"signature_id":2200073') && l.includes('"src_ip":"192.168.230.'));
  const totalBefore = dashboardOf(t.app).feeds.alerts.takeDelta().alerts_total;
  const result = ids.ingestEve(eve);
  assert.equal(result.ingested + result.suppressed, expectedAlerts.length);
  // Ingested (not suppressed) alerts feed the dashboard frame's alert delta.
  const delta = dashboardOf(t.app).feeds.alerts.takeDelta();
  assert.equal(delta.alerts_total - totalBefore, result.ingested);
  assert.ok(delta.new_alerts > 0 && delta.recent_alerts.every((a) => a.signature_msg.length > 0));
  assert.equal(result.suppressed, silenced.length);
  assert.ok(result.suppressed > 0);
  const threshold = ids.compileSuppressions();
  assert.equal(threshold, 'suppress gen_id 1, sig_id 2200073, track by_src, ip 192.168.230.0/24\n');

  const listed = await t.request('GET', '/api/v1/ids/alerts?limit=5');
  assert.equal(listed.statusCode, 200);
  assert.equal(listed.headers['x-total-count'], String(result.ingested));
  const alerts = json(listed);
  assert.equal(alerts.length, 5);
  assert.ok(alerts[0].timestamp >= alerts[4].timestamp, 'newest first');
  const one = json(await t.request('GET', `/api/v1/ids/alerts/${alerts[0].id}`));
  assert.equal(one.classification, 'unreviewed');
  assert.equal(typeof one.metadata, 'object');

  const bySeverity = json(await t.request('GET', '/api/v1/ids/alerts?severity=3&limit=10000'));
  assert.ok(bySeverity.every((a: { severity: number }) => a.severity === 3));
  assert.deepEqual(json(await t.request('PUT', `/api/v1/ids/alerts/${one.id}/classify`, { classification: 'false_positive', notes: 'lab traffic' })), { message: 'alert classified as false_positive' });
  const classified = json(await t.request('GET', `/api/v1/ids/alerts/${one.id}`));
  assert.equal(classified.acknowledged, true);
  assert.equal(classified.analyst_notes, 'lab traffic');
  const badClass = await t.request('PUT', `/api/v1/ids/alerts/${one.id}/classify`, { classification: 'maybe' });
  assert.equal(badClass.statusCode, 400);
  assert.deepEqual(Object.keys(json(badClass)), ['error']);
  assert.equal(json(await t.request('GET', '/api/v1/ids/alerts?classification=reviewed')).length, 1);
  await t.request('PUT', `/api/v1/ids/alerts/${alerts[1].id}/acknowledge`);
  assert.equal(json(await t.request('GET', '/api/v1/ids/alerts?acknowledged=true')).length, 2);
  const missing = await t.request('PUT', '/api/v1/ids/alerts/00000000-0000-4000-8000-000000000000/acknowledge');
  assert.equal(missing.statusCode, 404);
  assert.deepEqual(Object.keys(json(missing)), ['error']);

  const stats = json(await t.request('GET', '/api/v1/ids/stats'));
  assert.ok(stats.top_signatures.length > 0);
  assert.ok(stats.severity_counts.some(([label]: [string]) => label === 'medium'));

  const purge = json(await t.request('DELETE', '/api/v1/ids/alerts'));
  assert.equal(purge.purged, result.ingested);
  assert.equal(json(await t.request('GET', '/api/v1/ids/alerts')).length, 0);
  const id = json(suppression).id;
  assert.equal((await t.request('DELETE', `/api/v1/ids/suppressions/${id}`)).statusCode, 204);
});
