/**
 * The thread that reads `table inet bulwark` back (nft-read-back.ts): runs `nft -s list table` and answers with
 * the canonical state only, so the listing's megabytes are parsed and dropped on this thread's heap.
 */
import { parentPort } from 'node:worker_threads';
import { readBackTable } from './nft-listing.js';

parentPort!.on('message', async ({ id, nft }: { id: number; nft: string }) => {
  parentPort!.postMessage({ id, result: await readBackTable(nft) });
});
