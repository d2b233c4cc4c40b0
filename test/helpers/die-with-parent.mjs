// Preloaded (`--import`) into the controller and appliance processes the fleet tests spawn, never into the product:
// the test holds the write end of the child's stdin, so when the test process goes — however, a SIGKILL included —
// the pipe closes, the child reads its end, and exits. Plain JavaScript: the bench's compiled controller loads it
// without tsx. Nothing here writes or reads a byte of the product's own.
const stdin = process.stdin;
const leave = () => process.exit(1);
stdin.on('data', () => undefined);
stdin.once('end', leave);
stdin.once('close', leave);
stdin.once('error', leave);
// The pipe alone does not keep the process alive: a graceful stop still ends it when its own work is done.
stdin.unref?.();
