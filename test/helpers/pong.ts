import { spawnSync } from 'node:child_process';
import { inNamespace } from './netns-lab.js';

/** A TCP server answering each connection with `pong <client address>`: a script for `node -e` in a namespace. */
export const pongServer = (port: number) =>
  `require('net').createServer((s) => { s.end('pong ' + s.remoteAddress.replace('::ffff:', '') + '\\n'); }).listen(${port}, '0.0.0.0');`;

const pongClient = (host: string, port: number) =>
  `const s = require('net').connect(${port}, '${host}'); let d = ''; s.on('data', (c) => d += c); s.on('end', () => { console.log(d.trim()); process.exit(0); });` +
  ` s.on('error', () => { console.log('FAIL'); process.exit(0); }); setTimeout(() => { console.log('FAIL'); process.exit(0); }, 3000);`;

/** Connects from namespace `ns` to host:port: the pong server's answer, or `FAIL` after 3 s. */
export const pong = (ns: string, host: string, port: number) => inNamespace(ns, process.execPath, ['-e', pongClient(host, port)]).trim();

/** Whether `count` pings from namespace `ns` to `host` are answered (busybox ping, 1 s each). */
export const pings = (ns: string, host: string, count = 1) =>
  spawnSync('ip', ['netns', 'exec', ns, 'busybox', 'ping', '-c', String(count), '-W', '1', host], { encoding: 'utf8' }).status === 0;
