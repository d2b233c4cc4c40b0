import { createServer } from 'node:net';

/**
 * A syslog collector for the syslog benchmark, run as a child process so its CPU time is not the server's:
 * accepts TCP, counts RFC 6587 octet-counted frames, and on a message answers how many it has received.
 */
let frames = 0;
const server = createServer((socket) => {
  let buffered: Buffer = Buffer.alloc(0);
  socket.on('data', (chunk: Buffer) => {
    buffered = buffered.length ? Buffer.concat([buffered, chunk]) : chunk;
    let at = 0;
    for (;;) {
      const space = buffered.indexOf(0x20, at);
      if (space < 0) break;
      const length = Number(buffered.subarray(at, space).toString());
      if (buffered.length < space + 1 + length) break;
      at = space + 1 + length;
      frames++;
    }
    buffered = buffered.subarray(at);
  });
});
server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as { port: number }).port }));
process.on('message', () => process.send!({ frames }));
