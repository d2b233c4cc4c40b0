/**
 * A TCP load balancer on loopback in front of controller processes, for the fleet tests: it passes each new
 * connection (TLS and all) to the port it currently points at, as a balancer sends agents to a live process.
 * The controllers' certificates name 127.0.0.1, so an agent dialling the balancer verifies whichever answers.
 */
import { connect, createServer, type Socket } from 'node:net';

export interface Balancer {
  readonly url: string;
  /** Where new connections go from now on (open ones stay where they are). */
  pointAt(port: number): void;
  close(): Promise<void>;
}

export async function tcpBalancer(port: number): Promise<Balancer> {
  let target = port;
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };
  const server = createServer((socket) => {
    const upstream = connect(target, '127.0.0.1');
    track(socket);
    track(upstream);
    socket.pipe(upstream).pipe(socket);
    // A refused or reset end closes the other: the agent sees its connection fail and retries.
    socket.on('error', () => upstream.destroy());
    upstream.on('error', () => socket.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('the balancer has no port');
  return {
    url: `https://127.0.0.1:${address.port}`,
    pointAt: (next) => (target = next),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
