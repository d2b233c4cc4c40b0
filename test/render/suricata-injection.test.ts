/**
 * suricata.yaml (src/render/suricata/suricata-yaml.ts) from hostile values: the IDS settings that reach it — home_net,
 * external_net, interfaces — are refused on write (400 naming the field), and the renderer, given the same
 * values directly (a stored value from an older release), refuses them or writes a document that reads back
 * with exactly the intended keys and the value as one scalar.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { parse } from 'yaml';
import { json } from '../helpers/app.js';
import { startAreaApp, type AreaApp } from '../helpers/area-app.js';
import { renderSuricataYaml, type SuricataSettings } from '../../src/render/suricata/suricata-yaml.js';
import { HttpError } from '../../src/core/errors.js';

const HOSTILE = ['"', "'", ':', ': x', '\n', '\r\nrule-files: [/etc/shadow]', '#', '- ', '{a: b}', '[x]', '$HOME_NET]', '$X,1.2.3.4', '!', '\u0000', 'eth0 --user root', '../../x', '*', '%YAML', '&anchor', '*alias', '|', '>'];
const benign: SuricataSettings = {
  mode: 'ids', homeNet: ['10.0.0.0/8', '$LAN'], externalNet: ['!$HOME_NET'], interfaces: ['eth0'], ruleDir: '/run/s', logDir: '/run/s/state', queue: 0,
  workerCount: 2, flowTableSize: 65536, streamDepthMb: 1, reassemblyBudgetMb: 256,
};

let t: AreaApp;
before(async () => {
  t = await startAreaApp();
});
after(() => t.close());

const keys = (tree: unknown, prefix = ''): string[] =>
  Array.isArray(tree) ? tree.flatMap((item) => keys(item, `${prefix}[]`)) : tree && typeof tree === 'object' ? Object.entries(tree).flatMap(([k, v]) => [`${prefix}.${k}`, ...keys(v, `${prefix}.${k}`)]) : [];

test('hostile home_net, external_net and interfaces: 400 naming the field on write; the renderer refuses or keeps the structure', async () => {
  const reference = keys(parse(renderSuricataYaml(benign).replace(/^%YAML 1\.1\n---\n/, ''))).sort();
  let refusedWrites = 0;
  let refusedRenders = 0;
  for (const hostile of HOSTILE) {
    for (const [field, setting] of [['home_net', 'homeNet'], ['external_net', 'externalNet'], ['interfaces', 'interfaces']] as const) {
      for (const value of [hostile, `10.0.0.0/8${hostile}`, `eth0${hostile}`, `$LAN${hostile}`]) {
        const response = await t.request('PUT', '/api/v1/ids/config', { [field]: [value] });
        if (response.statusCode !== 200) {
          assert.equal(response.statusCode, 400, `${field}=${JSON.stringify(value)}: ${response.body}`);
          assert.match(json(response).error, new RegExp(`body\\.${field}`));
          refusedWrites++;
        }
        let text: string;
        try {
          text = renderSuricataYaml({ ...benign, [setting]: [value] });
        } catch (error) {
          assert.ok(error instanceof HttpError && error.statusCode === 409, `${field}=${JSON.stringify(value)}: ${(error as Error).message}`);
          refusedRenders++;
          continue;
        }
        assert.match(text, /^%YAML 1\.1\n---\n/);
        const document = parse(text.replace(/^%YAML 1\.1\n---\n/, ''));
        assert.deepEqual(keys(document).sort(), reference, `${field}=${JSON.stringify(value)} changed the document's keys`);
      }
    }
  }
  assert.ok(refusedWrites > 100 && refusedRenders > 100, `writes refused ${refusedWrites}, renders refused ${refusedRenders}`);
});
