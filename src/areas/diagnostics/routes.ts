/**
 * Diagnostics (issue 34 item 2, docs/diagnostics.md): ping, traceroute, DNS lookup and TCP port test streamed
 * as Server-Sent Events (POST; the console reads them with fetch), and a packet capture answered as a pcap file.
 * Each run is held to interfaces:write, to the per-account run limit, and to a time limit; the tools run as the
 * unprivileged probe account. Only the linux platform runs them: the simulated platform answers 503 rather than
 * pretending a reply.
 */
import { existsSync } from 'node:fs';
import { lookup } from 'node:dns/promises';
import { connect } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Area } from '../area.js';
import type { AppContext } from '../../context.js';
import { badRequest, unauthorized, unavailable, HttpError } from '../../core/errors.js';
import type { Permission } from '../../core/permissions.js';
import { route } from '../../http/route.js';
import { BINARY, ErrorAnswer, MediaBody } from '../../http/documented-responses.js';
import { EventStream } from '../../live/event-stream.js';
import { capturePackets, runToolLines } from '../../platform/diagnostic-tools.js';
import { CaptureBody, DnsBody, PingBody, TcpBody, TracerouteBody } from './schema.js';
import { captureFilter, checkHost, checkInterface, digArguments, pingArguments, tracerouteArguments } from './fields.js';
import { DEFAULT_RUN_LIMITS, RunLimiter, type RunLimits } from './run-limiter.js';

/** Running a probe from the box, or reading its traffic, is an operator's network work: not a viewer's. */
export const DIAGNOSTICS_PERMISSION: Permission = 'interfaces:write';
const TAGS = ['diagnostics'];

const STREAM_ANSWERS = {
  200: MediaBody('text/event-stream', 'Events: `start` {command}, one `line` {text} per output line as it comes, then `exit` {exit_code, timed_out, lines_dropped} (or `error` {error}); the stream then ends'),
  406: ErrorAnswer('The request\'s Accept does not allow text/event-stream'),
  429: ErrorAnswer('The account already runs 2 diagnostics, or started 20 within a minute (Retry-After)'),
  503: ErrorAnswer('Not the linux platform (the simulated platform runs no tools), or the tool is not installed (names the Debian package)'),
};

export function createDiagnosticsArea(context: AppContext, options: { limits?: RunLimits } = {}): Area & { limiter: RunLimiter } {
  const limiter = new RunLimiter(options.limits ?? DEFAULT_RUN_LIMITS);

  /**
   * The checks every run passes before it starts, in order: real platform, then a slot of the caller's account;
   * an admitted run is written to the audit trail (who probed or captured what, from where).
   */
  function admit(request: FastifyRequest, command: readonly string[]): () => void {
    if (context.platform.name !== 'linux') {
      throw unavailable(`diagnostics run the box's own tools (ping, traceroute, dig, tcpdump) and need the linux platform; this is the ${context.platform.name} platform${context.platform.simulated ? ', which sends no packets' : ''}`);
    }
    if (!request.identity) throw unauthorized();
    const release = limiter.take(request.identity.userId);
    context.db
      .prepare('INSERT INTO audit_log (at, category, action, actor, client_ip, outcome, details) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(new Date(context.clock.now()).toISOString(), 'diagnostics', command[0], request.identity.username, request.ip, 'success', command.join(' '));
    return release;
  }

  function requireInterface(name: string): void {
    checkInterface(name);
    if (!existsSync(`/sys/class/net/${name}`)) throw badRequest(`body.interface: no interface "${name}" on this box`);
  }

  /** Streams one run: `start`, its lines, then `exit`; the slot is given back when it ends or the client leaves. */
  function stream(request: FastifyRequest, reply: FastifyReply, command: string[], run: (send: (line: string) => void, cancelled: (cancel: () => void) => void) => Promise<object>): void {
    const release = admit(request, command);
    let events: EventStream;
    try {
      events = new EventStream(request, reply, { registry: { streams: context.identity.streams, permission: DIAGNOSTICS_PERMISSION } });
    } catch (error) {
      release();
      throw error;
    }
    events.onClose(release);
    events.send({ command }, 'start');
    void run((line) => events.send({ text: line }, 'line'), (cancel) => events.onClose(cancel))
      .then((exit) => events.send(exit, 'exit'))
      .catch((error: Error) => events.send({ error: error instanceof HttpError ? error.message : `the run failed: ${error.message}` }, 'error'))
      .finally(() => events.close());
  }

  const lineTool = (file: string, args: string[], timeoutMs: number) => (request: FastifyRequest, reply: FastifyReply) =>
    stream(request, reply, [file, ...args], (onLine, cancelled) => runToolLines(file, args, { timeoutMs, onLine, cancelled }));

  return {
    name: 'diagnostics',
    limiter,
    routes: [
      route({
        method: 'POST', path: '/api/v1/diagnostics/ping', access: DIAGNOSTICS_PERMISSION, tags: TAGS,
        summary: 'Ping a host from the box (ping as nobody, one echo a second, at most 20), output streamed',
        schema: { body: PingBody, response: STREAM_ANSWERS },
        handler: (request, reply) => {
          const args = pingArguments(request.body);
          if (request.body.interface !== undefined) requireInterface(request.body.interface);
          lineTool('ping', args, request.body.count * 1000 + 5000)(request, reply);
        },
      }),
      route({
        method: 'POST', path: '/api/v1/diagnostics/traceroute', access: DIAGNOSTICS_PERMISSION, tags: TAGS,
        summary: 'Trace the route to a host (traceroute with UDP probes as nobody, one probe a hop), output streamed',
        schema: { body: TracerouteBody, response: STREAM_ANSWERS },
        handler: (request, reply) => lineTool('traceroute', tracerouteArguments(request.body), 90_000)(request, reply),
      }),
      route({
        method: 'POST', path: '/api/v1/diagnostics/dns', access: DIAGNOSTICS_PERMISSION, tags: TAGS,
        summary: 'Look a name up (dig as nobody) through the box\'s resolver or a chosen server, output streamed',
        schema: { body: DnsBody, response: STREAM_ANSWERS },
        handler: (request, reply) => lineTool('dig', digArguments(request.body), 15_000)(request, reply),
      }),
      route({
        method: 'POST', path: '/api/v1/diagnostics/tcp', access: DIAGNOSTICS_PERMISSION, tags: TAGS,
        summary: 'Test whether a TCP port answers (connect only, nothing sent or read), output streamed',
        schema: { body: TcpBody, response: STREAM_ANSWERS },
        handler: (request, reply) => {
          const { port, timeout_s } = request.body;
          const host = checkHost('host', request.body.host);
          stream(request, reply, ['tcp-connect', host, String(port)], (send, cancelled) => tcpTest(host, port, timeout_s * 1000, send, cancelled));
        },
      }),
      route({
        method: 'POST', path: '/api/v1/diagnostics/capture', access: DIAGNOSTICS_PERMISSION, tags: TAGS,
        summary: 'Capture packets on an interface (tcpdump, dropping to nobody) for a duration within a size cap; answers the pcap file',
        schema: {
          body: CaptureBody,
          response: {
            200: MediaBody('application/vnd.tcpdump.pcap', 'The capture (pcap, whole packets only); X-Capture-Packets and X-Capture-Ended-By (duration, size, packets) describe it', BINARY),
            409: ErrorAnswer('tcpdump refused the capture (its message)'),
            429: STREAM_ANSWERS[429],
            503: STREAM_ANSWERS[503],
          },
        },
        handler: async (request, reply) => {
          const body = request.body;
          const filter = captureFilter(body);
          requireInterface(body.interface);
          const release = admit(request, ['tcpdump', '-i', body.interface, '--', ...filter]);
          try {
            const result = await capturePackets(
              { interface: body.interface, filter, durationMs: body.duration_s * 1000, maxBytes: body.max_bytes, maxPackets: body.max_packets },
              // The response's close (the client left), not the request's: a POST's request closes once its body is read.
              (cancel) => reply.raw.once('close', cancel),
            );
            if (result.error) throw new HttpError(409, `tcpdump refused the capture: ${result.error}`);
            const stamp = new Date().toISOString().replace(/[:.]/g, '-');
            return reply
              .header('content-type', 'application/vnd.tcpdump.pcap')
              .header('content-disposition', `attachment; filename="capture-${body.interface}-${stamp}.pcap"`)
              .header('x-capture-packets', String(result.packets))
              .header('x-capture-ended-by', result.ended_by)
              .send(result.pcap);
          } finally {
            release();
          }
        },
      }),
    ],
  };
}

/** A TCP connect to the host's first address (the box's resolver), reported as lines like the tools' output. */
async function tcpTest(host: string, port: number, timeoutMs: number, send: (line: string) => void, cancelled: (cancel: () => void) => void): Promise<object> {
  let address: string;
  try {
    ({ address } = await lookup(host));
  } catch (error) {
    send(`cannot resolve ${host}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    return { open: false, exit_code: 2, timed_out: false };
  }
  if (address !== host) send(`${host} is ${address}`);
  send(`connecting to ${address} port ${port} …`);
  const started = performance.now();
  return new Promise((resolve) => {
    const socket = connect({ host: address, port, timeout: timeoutMs });
    const done = (line: string, result: { open: boolean; timed_out: boolean }) => {
      socket.destroy();
      send(line);
      resolve({ ...result, exit_code: result.open ? 0 : 1 });
    };
    cancelled(() => socket.destroy());
    socket.once('connect', () => done(`open: connected in ${(performance.now() - started).toFixed(1)} ms`, { open: true, timed_out: false }));
    socket.once('timeout', () => done(`no answer within ${timeoutMs / 1000} s (filtered or host down)`, { open: false, timed_out: true }));
    socket.once('error', (error: NodeJS.ErrnoException) => done(error.code === 'ECONNREFUSED' ? 'closed: connection refused' : `failed: ${error.code ?? error.message}`, { open: false, timed_out: false }));
  });
}
