/**
 * A fleet member behind NAT (issue 35): the member's namespace (10.66.0.2/24) — a router namespace that
 * masquerades what leaves towards the controller and drops every new connection inward — the controller's side
 * (198.51.100.0/24), where a relay on 198.51.100.10:8443 stands for the controller. The controller itself runs on
 * the test's loopback next to PostgreSQL; the relay reaches it through a unix socket this process serves (files
 * cross namespaces, addresses do not). Nothing on the controller's side has a route to the member's network.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inNamespace, type NetnsLab } from './netns-lab.js';
import { until } from './fleet-processes.js';

export const NAT = { member: '10.66.0.2', routerInside: '10.66.0.1', routerOutside: '198.51.100.1', controller: '198.51.100.10' } as const;

export interface NatToController {
  /** The member's namespace: the appliance or agent under test runs here. */
  readonly member: string;
  /** What the member dials: the relay standing for the controller. */
  readonly controllerUrl: string;
  /** The source address of every connection the relay accepted so far. */
  sources(): string[];
  /**
   * Whether the controller's side reaches the member: a ping as it is (no route), and a ping with a route through
   * the router added for the attempt (the router drops new connections inward). True if either is answered.
   */
  controllerSideReachesMember(): boolean;
  /** Closes the unix socket's connections and removes its folder (the lab's cleanup ends the relay and the namespaces). */
  close(): void;
}

/** Builds the three namespaces in `lab` and starts the relay to the controller listening on loopback `controllerPort`. */
export async function natToController(lab: NetnsLab, controllerPort: number): Promise<NatToController> {
  const folder = mkdtempSync(join(tmpdir(), 'bulwark-fleet-nat-'));
  const sockets = new Set<Socket>();
  const socketPath = join(folder, 'controller.sock');
  const toController = createServer((socket) => {
    const upstream = connect(controllerPort, '127.0.0.1');
    for (const end of [socket, upstream]) {
      sockets.add(end);
      end.once('close', () => sockets.delete(end));
    }
    socket.pipe(upstream).pipe(socket);
    socket.on('error', () => upstream.destroy());
    upstream.on('error', () => socket.destroy());
  });
  const close = () => {
    toController.close();
    for (const socket of sockets) socket.destroy();
    rmSync(folder, { recursive: true, force: true });
  };
  try {
    const member = lab.namespace('m');
    const router = lab.namespace('r');
    const side = lab.namespace('c');
    lab.link({ ns: member, name: `m${lab.tag}`, address: `${NAT.member}/24` }, { ns: router, name: `ri${lab.tag}`, address: `${NAT.routerInside}/24` });
    lab.link({ ns: router, name: `ro${lab.tag}`, address: `${NAT.routerOutside}/24` }, { ns: side, name: `c${lab.tag}`, address: `${NAT.controller}/24` });
    // Only the member has a default route (through the router); the controller's side has none towards it.
    inNamespace(member, 'ip', ['route', 'add', 'default', 'via', NAT.routerInside]);
    inNamespace(router, 'sysctl', ['-q', '-w', 'net.ipv4.ip_forward=1']);
    writeFileSync(join(folder, 'nat.nft'), `table ip fleet_nat {
  chain postrouting { type nat hook postrouting priority 100; oifname "ro${lab.tag}" masquerade; }
  chain forward { type filter hook forward priority 0; policy drop; ct state established,related accept; iifname "ri${lab.tag}" oifname "ro${lab.tag}" accept; }
}
`);
    inNamespace(router, 'nft', ['-f', join(folder, 'nat.nft')]);
    await new Promise<void>((resolve) => toController.listen(socketPath, resolve));
    // The relay prints the source address of every connection it accepts.
    const relay = lab.spawnIn(side, process.execPath, ['-e',
      `require('net').createServer((s) => { console.log('from ' + s.remoteAddress); const u = require('net').connect(${JSON.stringify(socketPath)}); s.pipe(u).pipe(s); s.on('error', () => u.destroy()); u.on('error', () => s.destroy()); }).listen(8443, ${JSON.stringify(NAT.controller)}, () => console.log('relaying'));`]);
    let relayed = '';
    relay.stdout!.on('data', (chunk) => (relayed += chunk));
    relay.stderr!.resume();
    await until('the relay listening', async () => {
      if (relay.exitCode !== null) throw new Error(`the relay exited with ${relay.exitCode}`);
      return relayed.includes('relaying');
    }, 60_000);
    const ping = () => spawnSync('ip', ['netns', 'exec', side, 'ping', '-c', '1', '-W', '1', NAT.member]).status === 0;
    return {
      member,
      controllerUrl: `https://${NAT.controller}:8443`,
      sources: () => relayed.split('\n').filter((line) => line.startsWith('from ')).map((line) => line.slice(5)),
      controllerSideReachesMember: () => {
        if (ping()) return true;
        inNamespace(side, 'ip', ['route', 'add', `${NAT.member}/32`, 'via', NAT.routerOutside]);
        try {
          return ping();
        } finally {
          inNamespace(side, 'ip', ['route', 'del', `${NAT.member}/32`]);
        }
      },
      close,
    };
  } catch (error) {
    close();
    throw error;
  }
}
