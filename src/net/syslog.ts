import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import { hostname as osHostname } from 'node:os';
import { replaceControls } from './header-text.js';

export interface SyslogTarget {
  host: string;
  port: number;
  transport: 'udp' | 'tcp';
  format: 'rfc3164' | 'rfc5424';
  facility: number;
  hostname_override: string;
}

const SEVERITY = { error: 3, warn: 4, info: 6, debug: 7 } as const;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** One syslog line in the configured format (RFC 3164 BSD style or RFC 5424). */
export function formatSyslog(target: SyslogTarget, level: keyof typeof SEVERITY, app: string, message: string, at: Date): string {
  const priority = target.facility * 8 + SEVERITY[level];
  const host = syslogToken(target.hostname_override || osHostname());
  app = syslogToken(app);
  message = syslogText(message);
  if (target.format === 'rfc5424') {
    return `<${priority}>1 ${at.toISOString()} ${host} ${app} ${process.pid} - - ${message}`;
  }
  const day = String(at.getUTCDate()).padStart(2, ' ');
  const time = at.toISOString().slice(11, 19);
  return `<${priority}>${MONTHS[at.getUTCMonth()]} ${day} ${time} ${host} ${app}[${process.pid}]: ${message}`;
}

/** A header token (HOSTNAME, APP-NAME): printable ASCII without spaces; anything else becomes `-`. */
function syslogToken(value: string): string {
  return value.replace(/[^\x21-\x7e]/g, '-') || '-';
}

/** The message text on one line: control characters (CR and LF end a TCP frame) become spaces. */
function syslogText(value: string): string {
  return replaceControls(value, ' ');
}

/** Sends one message: a UDP datagram, or a TCP connection with LF framing. */
export function sendSyslog(target: SyslogTarget, line: string, timeoutMs = 3000): Promise<void> {
  if (target.transport === 'udp') {
    return new Promise((resolve, reject) => {
      const socket = createSocket(target.host.includes(':') ? 'udp6' : 'udp4');
      socket.send(Buffer.from(line), target.port, target.host, (error) => {
        socket.close();
        if (error) reject(error);
        else resolve();
      });
    });
  }
  return new Promise((resolve, reject) => {
    const socket = connect({ host: target.host, port: target.port, timeout: timeoutMs });
    socket.on('connect', () => socket.end(`${line}\n`, () => resolve()));
    socket.on('timeout', () => socket.destroy(new Error(`connection to ${target.host}:${target.port} timed out`)));
    socket.on('error', reject);
  });
}
