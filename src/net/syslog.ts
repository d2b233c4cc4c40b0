import { createSocket } from 'node:dgram';
import { connect as tcpConnect, isIP, type Socket } from 'node:net';
import { checkServerIdentity, connect as tlsConnect, type PeerCertificate } from 'node:tls';
import { hostname as osHostname } from 'node:os';
import { replaceControls } from './header-text.js';

export interface SyslogTarget {
  host: string;
  port: number;
  transport: 'udp' | 'tcp' | 'tls';
  format: 'rfc3164' | 'rfc5424';
  facility: number;
  hostname_override: string;
  /** transport tls: the PEM of the CA that signs the collector's certificate (which must name `host`). */
  ca_pem?: string;
}

/** One RFC 5424 SD-ELEMENT: an SD-ID and its parameters, in order. */
export interface SdElement {
  id: string;
  params: readonly (readonly [string, string | number | boolean | null | undefined])[];
}

/** One message: severity 0..7 (RFC 5424 6.2.1), APP-NAME, MSGID, structured data and a readable MSG. */
export interface SyslogMessage {
  severity: number;
  app: string;
  msgid: string;
  structured: readonly SdElement[];
  text: string;
  at: Date;
}

/** Bulwark's private enterprise number placeholder for SD-IDs (RFC 5424 7.2.2 wants name@number). */
export const SD_ENTERPRISE = '32473';
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/**
 * The one encoding of structured data (RFC 5424 6.3): `[id name="value" ...]` per element, `-` when there is none.
 * PARAM-VALUE escapes `\`, `"` and `]` with a backslash; control characters become spaces (CR/LF would end a
 * frame for receivers that split lines). SD-NAMEs are 1..32 printable ASCII without `=`, space, `]` and `"`;
 * anything else in a name is replaced by `_` (names come from code, never from requests, but stay safe).
 */
export function structuredData(elements: readonly SdElement[]): string {
  const present = elements.filter((element) => element.params.some(([, value]) => value !== null && value !== undefined && value !== ''));
  if (present.length === 0) return '-';
  return present.map((element) => {
    const params = element.params
      .filter(([, value]) => value !== null && value !== undefined && value !== '')
      .map(([name, value]) => ` ${sdName(name)}="${sdParamValue(String(value))}"`)
      .join('');
    return `[${sdName(element.id, true)}${params}]`;
  }).join('');
}

/** A PARAM-VALUE (RFC 5424 6.3.3): `"`, `\` and `]` escaped, control characters as spaces. */
export function sdParamValue(value: string): string {
  return replaceControls(value, ' ').replace(/[\\"\]]/g, (character) => `\\${character}`);
}

/** An SD-NAME (or an SD-ID, which may carry one `@`): 1..32 characters of %d33-126 except `=`, SP, `]`, `"`. */
function sdName(value: string, isId = false): string {
  const cleaned = value.replace(isId ? /[^\x21-\x7e]|[=\]"]/g : /[^\x21-\x7e]|[=\]"@]/g, '_').slice(0, 32);
  return cleaned || '_';
}

/** One message in the configured format: RFC 5424 with structured data, or RFC 3164 (BSD) with the MSG only. */
export function formatSyslog(target: Pick<SyslogTarget, 'format' | 'facility' | 'hostname_override'>, message: SyslogMessage): string {
  const priority = target.facility * 8 + message.severity;
  const host = syslogToken(target.hostname_override || systemHostname(), 255);
  const app = syslogToken(message.app, 48);
  const text = syslogText(message.text);
  if (target.format === 'rfc5424') {
    return `<${priority}>1 ${message.at.toISOString()} ${host} ${app} ${process.pid} ${syslogToken(message.msgid, 32)} ${structuredData(message.structured)} ${text}`;
  }
  const at = message.at;
  const day = String(at.getUTCDate()).padStart(2, ' ');
  const time = at.toISOString().slice(11, 19);
  return `<${priority}>${MONTHS[at.getUTCMonth()]} ${day} ${time} ${host} ${app}[${process.pid}]: ${text}`;
}

/** The system's host name, read once a second at most (it is asked for every message). */
let hostnameCache = { name: '', at: 0 };
function systemHostname(): string {
  const now = Date.now();
  if (now - hostnameCache.at > 1000) hostnameCache = { name: osHostname(), at: now };
  return hostnameCache.name;
}

/** A header token (HOSTNAME, APP-NAME, MSGID): printable ASCII without spaces, at most `max`; anything else `-`. */
function syslogToken(value: string, max: number): string {
  return value.replace(/[^\x21-\x7e]/g, '-').slice(0, max) || '-';
}

/** The message text on one line: control characters (CR and LF end a frame for line-based receivers) become spaces. */
function syslogText(value: string): string {
  return replaceControls(value, ' ');
}

/** RFC 6587 octet counting: `<length> <message>`, the length in bytes of the UTF-8 message. */
export function octetFrame(line: string): Buffer {
  const body = Buffer.from(line, 'utf8');
  return Buffer.concat([Buffer.from(`${body.length} `), body]);
}

/** Opens a stream to the collector: plain TCP, or TLS verifying the certificate against `ca_pem` and the host name. */
function openStream(target: SyslogTarget, address: string, timeoutMs: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket: Socket = target.transport === 'tls'
      ? tlsConnect({
          host: address, port: target.port, timeout: timeoutMs,
          ca: target.ca_pem ? [target.ca_pem] : undefined,
          servername: isIP(target.host) ? undefined : target.host,
          // The certificate must name `host` (a DNS name or an IP address SAN), whatever address it resolved to.
          checkServerIdentity: (_name, cert) => tlsCheckIdentity(target.host, cert),
        })
      : tcpConnect({ host: address, port: target.port, timeout: timeoutMs });
    const fail = (error: Error) => {
      socket.destroy();
      reject(error);
    };
    socket.once(target.transport === 'tls' ? 'secureConnect' : 'connect', () => {
      socket.off('error', fail);
      socket.setTimeout(0);
      resolve(socket);
    });
    socket.once('timeout', () => fail(new Error(`connection to ${target.host}:${target.port} timed out`)));
    socket.once('error', fail);
  });
}

function tlsCheckIdentity(host: string, cert: PeerCertificate): Error | undefined {
  return checkServerIdentity(host.replace(/^\[|\]$/g, ''), cert);
}

/** Sends one message and closes: a UDP datagram, or a TCP/TLS connection with one octet-counted frame. */
export async function sendSyslog(target: SyslogTarget, address: string, line: string, timeoutMs = 3000): Promise<void> {
  if (target.transport === 'udp') {
    return new Promise((resolve, reject) => {
      const socket = createSocket(isIP(address) === 6 ? 'udp6' : 'udp4');
      socket.send(Buffer.from(line), target.port, address, (error) => {
        socket.close();
        if (error) reject(error);
        else resolve();
      });
    });
  }
  const socket = await openStream(target, address, timeoutMs);
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.end(octetFrame(line), () => resolve());
  });
}

export interface ConnectionEvents {
  /** A message left the process (written to the socket, or sent as a datagram). */
  sent(key: string): void;
  /** A message was dropped: the queue was full (its oldest went) or it could not be sent at all. */
  dropped(key: string): void;
  /** A send or connection failed; `connected` is the state after it. */
  failed(message: string): void;
  connected(connected: boolean): void;
}

/**
 * A long-lived connection to the collector. UDP sends each message as a datagram. TCP and TLS keep one stream,
 * octet-counted (RFC 6587; RFC 5425 over TLS), and a bounded queue: while the collector is away messages wait
 * (the oldest dropped and counted beyond `queueLimit`), the connection is retried with a backoff of 1 s doubling
 * to 30 s, and the queue is delivered in order once it is back. A message counts as sent when the kernel took it
 * (a collector that dies with bytes in flight loses those, as any TCP syslog sender would).
 */
export class SyslogConnection {
  private readonly queue: { key: string; frame: Buffer }[] = [];
  private socket: Socket | null = null;
  private udp: ReturnType<typeof createSocket> | null = null;
  private connecting = false;
  private retryTimer: NodeJS.Timeout | null = null;
  private backoffMs = 1000;
  private closed = false;
  private flushing = false;

  constructor(
    private readonly target: SyslogTarget,
    /** Resolves the host through the outbound guard and answers the address to connect to. */
    private readonly resolveAddress: () => Promise<string>,
    private readonly queueLimit: number,
    private readonly events: ConnectionEvents,
  ) {}

  /** Messages waiting for the collector (all, or those sent with `key`). */
  queued(key?: string): number {
    return key === undefined ? this.queue.length : this.queue.filter((entry) => entry.key === key).length;
  }

  send(key: string, line: string): void {
    if (this.closed) return;
    if (this.target.transport === 'udp') {
      void this.sendDatagram(key, line);
      return;
    }
    this.queue.push({ key, frame: octetFrame(line) });
    while (this.queue.length > this.queueLimit) this.events.dropped(this.queue.shift()!.key);
    if (this.socket) this.scheduleFlush();
    else this.connect();
  }

  private flushScheduled = false;
  /** Messages of one turn of the event loop leave in one write (a write per message costs more than formatting it). */
  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => {
      this.flushScheduled = false;
      this.flush();
    });
  }

  close(): void {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.socket?.destroy();
    this.udp?.close();
    this.socket = null;
    this.udp = null;
  }

  private udpAddress: string | null = null;
  private async sendDatagram(key: string, line: string): Promise<void> {
    try {
      this.udpAddress ??= await this.resolveAddress();
      const address = this.udpAddress;
      if (!this.udp) {
        this.udp = createSocket(isIP(address) === 6 ? 'udp6' : 'udp4');
        this.udp.on('error', (error) => this.events.failed(error.message));
        this.udp.unref();
      }
      this.udp.send(Buffer.from(line), this.target.port, address, (error) => {
        if (error) {
          this.events.failed(error.message);
          this.events.dropped(key);
        } else {
          this.events.connected(true);
          this.events.sent(key);
        }
      });
    } catch (error) {
      this.udpAddress = null;
      this.events.failed((error as Error).message);
      this.events.dropped(key);
    }
  }

  private connect(): void {
    if (this.connecting || this.retryTimer || this.closed) return;
    this.connecting = true;
    (async () => {
      const address = await this.resolveAddress();
      return openStream(this.target, address, 10_000);
    })().then((socket) => {
      this.connecting = false;
      if (this.closed) {
        socket.destroy();
        return;
      }
      this.socket = socket;
      this.backoffMs = 1000;
      socket.unref();
      socket.on('error', (error) => this.lost(socket, error.message));
      socket.on('close', () => this.lost(socket, 'the collector closed the connection'));
      // A collector never writes on a syslog stream; reading keeps a half-closed peer from going unnoticed.
      socket.on('data', () => undefined);
      socket.on('end', () => this.lost(socket, 'the collector closed the connection'));
      this.events.connected(true);
      this.flush();
    }, (error: Error) => {
      this.connecting = false;
      this.events.failed(error.message);
      this.events.connected(false);
      this.retry();
    });
  }

  private lost(socket: Socket, message: string): void {
    if (this.socket !== socket) return;
    this.socket = null;
    socket.destroy();
    this.events.failed(message);
    this.events.connected(false);
    this.retry();
  }

  private retry(): void {
    if (this.closed || this.retryTimer) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      if (this.queue.length > 0) this.connect();
    }, this.backoffMs);
    this.retryTimer.unref();
    this.backoffMs = Math.min(this.backoffMs * 2, 30_000);
  }

  /** Writes the queue in order, in chunks of up to 256 KiB, while the socket takes it; pauses on backpressure until 'drain'. */
  private flush(): void {
    const socket = this.socket;
    if (!socket || this.flushing) return;
    this.flushing = true;
    try {
      while (this.queue.length > 0 && this.socket === socket) {
        const batch: Buffer[] = [];
        let bytes = 0;
        while (this.queue.length > 0 && bytes < 256 * 1024) {
          const { key, frame } = this.queue.shift()!;
          batch.push(frame);
          bytes += frame.length;
          this.events.sent(key);
        }
        const more = socket.write(batch.length === 1 ? batch[0] : Buffer.concat(batch, bytes));
        if (!more) {
          socket.once('drain', () => this.flush());
          return;
        }
      }
    } finally {
      this.flushing = false;
    }
  }
}
