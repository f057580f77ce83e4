/**
 * An entry proven in a hub's log: its bytes, rebuilt by the client, and an inclusion proof checked
 * against the root of a checkpoint the client has already opened with the pinned hub key. One rule
 * for every client; each brings its own way of fetching the proof (node:http in the CLI, fetch in a
 * page), so this module imports nothing of the network.
 */
import { verifyInclusion } from '../core/merkle.js';
import { type LogEntry, logEntryBytes } from './wire.js';

/** What a verified checkpoint commits to. */
export interface SignedTree {
  size: number;
  root: Uint8Array;
}

/** Fetches the inclusion proof of entry `index` in the tree of `size`: base64 hashes. */
export type FetchProof = (index: number, size: number) => Promise<readonly string[]>;

/** Is `entry` the log's entry `index` in the signed tree? A fetch that fails rejects. */
export async function proveEntry(
  entry: LogEntry,
  index: number,
  tree: SignedTree,
  fetchProof: FetchProof,
): Promise<boolean> {
  if (!Number.isSafeInteger(index) || index < 0 || index >= tree.size) return false;
  const proof = (await fetchProof(index, tree.size)).map((p) => Buffer.from(p, 'base64'));
  return verifyInclusion(logEntryBytes(entry), index, tree.size, proof, tree.root);
}
