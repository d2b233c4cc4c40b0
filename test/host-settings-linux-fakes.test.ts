/**
 * The linux host-settings branches this machine cannot run (PID 1 is not systemd, no GRUB), through fake
 * `systemctl` and `update-grub` on PATH against a host root in a temporary directory, with the running-system
 * steps on (the fakes are all they reach): systemd-resolved gets a drop-in, is restarted and must list the
 * servers; update-grub runs when /boot/grub exists; a failure answers 409 and puts the previous files back.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLinuxHostSettings } from '../src/platform/linux/host-settings.js';
import { HttpError } from '../src/core/errors.js';

const fakeDir = mkdtempSync(join(tmpdir(), 'bulwark-fake-linux-host-'));
const root = mkdtempSync(join(tmpdir(), 'bulwark-linux-root-'));
after(() => {
  rmSync(fakeDir, { recursive: true, force: true });
  rmSync(root, { recursive: true, force: true });
});

const fake = (name: string, behaviour: string) => {
  writeFileSync(join(fakeDir, name), `#!/bin/sh\nprintf '%s\\n' "${name} $*" >> "${fakeDir}/calls"\n${behaviour}\nexit 0\n`);
  chmodSync(join(fakeDir, name), 0o755);
};
// systemctl restart systemd-resolved: the servers of the drop-in become resolved's upstream resolv.conf (unless told to fail).
fake('systemctl', `[ -e "${fakeDir}/resolved-broken" ] && exit 0
sed -n 's/^DNS=//p' "${root}/etc/systemd/resolved.conf.d/bulwark.conf" | tr ' ' '\\n' | sed 's/^/nameserver /' > "${root}/run/systemd/resolve/resolv.conf"`);
fake('update-grub', `[ -e "${fakeDir}/grub-broken" ] && { echo "grub-mkconfig: error" >&2; exit 1; }`);
process.env.PATH = `${fakeDir}:${process.env.PATH}`;

const calls = () => {
  const path = join(fakeDir, 'calls');
  const lines = existsSync(path) ? readFileSync(path, 'utf8').trim().split('\n') : [];
  rmSync(path, { force: true });
  return lines;
};
const refusal = (pattern: RegExp) => (error: HttpError) => {
  assert.equal(error.statusCode, 409);
  assert.match(error.message, pattern);
  return true;
};

mkdirSync(join(root, 'etc'), { recursive: true });
mkdirSync(join(root, 'run/systemd/resolve'), { recursive: true });
mkdirSync(join(root, 'run/systemd/system'), { recursive: true });
mkdirSync(join(root, 'boot/grub'), { recursive: true });
symlinkSync('../run/systemd/resolve/stub-resolv.conf', join(root, 'etc/resolv.conf'));
const host = createLinuxHostSettings(root, () => undefined, { live: true });

test('systemd-resolved: a drop-in, a restart, the servers read back from resolved; /etc/resolv.conf stays its link; a server resolved does not list is a 409 with the previous drop-in back', async () => {
  calls();
  const applied = await host.resolvers({ servers: ['192.0.2.53', '2001:db8::53'], search: ['example.lan'] });
  assert.deepEqual(applied.files, [join(root, 'etc/systemd/resolved.conf.d/bulwark.conf')]);
  assert.equal(readFileSync(join(root, 'etc/systemd/resolved.conf.d/bulwark.conf'), 'utf8'),
    "# Rendered by Bulwark (the appliance's own resolvers)\n[Resolve]\nDNS=192.0.2.53 2001:db8::53\nDomains=example.lan\n");
  assert.deepEqual(calls(), ['systemctl restart systemd-resolved.service']);
  assert.ok(readdirSync(join(root, 'etc')).includes('resolv.conf'));
  const kept = readFileSync(join(root, 'etc/systemd/resolved.conf.d/bulwark.conf'), 'utf8');
  writeFileSync(join(fakeDir, 'resolved-broken'), '');
  try {
    await assert.rejects(host.resolvers({ servers: ['198.51.100.1'], search: [] }), refusal(/systemd-resolved does not list 198\.51\.100\.1/));
  } finally {
    rmSync(join(fakeDir, 'resolved-broken'));
  }
  assert.equal(readFileSync(join(root, 'etc/systemd/resolved.conf.d/bulwark.conf'), 'utf8'), kept, 'the previous drop-in is back');
  assert.deepEqual(calls(), ['systemctl restart systemd-resolved.service', 'systemctl restart systemd-resolved.service'], 'restarted again on the previous drop-in');
});

test('serial console: update-grub runs when /boot/grub exists; its failure is a 409 and the previous drop-in is back', async () => {
  calls();
  const applied = await host.console({ kind: 'serial', baud: 38400 });
  assert.equal(applied.warning, 'applies at next boot');
  assert.deepEqual(calls(), ['update-grub']);
  const kept = readFileSync(join(root, 'etc/default/grub.d/bulwark.cfg'), 'utf8');
  writeFileSync(join(fakeDir, 'grub-broken'), '');
  try {
    await assert.rejects(host.console({ kind: 'video', baud: 115200 }), refusal(/update-grub failed/));
  } finally {
    rmSync(join(fakeDir, 'grub-broken'));
  }
  assert.equal(readFileSync(join(root, 'etc/default/grub.d/bulwark.cfg'), 'utf8'), kept);
});
