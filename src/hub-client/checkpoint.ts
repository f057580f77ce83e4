/** Fetching a hub's checkpoint and opening it with the pinned verifier key: the one trusted read. */
import { type NoteVerifier, openNote, parseNoteVerifierKey } from '../core/signed-note.js';
import { type Checkpoint, parseCheckpoint } from '../core/tlog-tiles.js';
import { HubClientError, hubRequest, hubUrl } from './http.js';

export interface VerifiedCheckpoint extends Checkpoint {
  /** The note as served. */
  note: string;
}

export function verifierOf(hubKey: string | NoteVerifier): NoteVerifier {
  try {
    return typeof hubKey === 'string' ? parseNoteVerifierKey(hubKey) : hubKey;
  } catch (error) {
    throw new HubClientError(
      'hub-key',
      `the hub key is not a verifier key <name>+<id>+<key>: ${(error as Error).message}`,
    );
  }
}

/** Reads and verifies a checkpoint note; its origin must be the verifier key's name. */
export function openCheckpoint(note: string, hubKey: string | NoteVerifier): VerifiedCheckpoint {
  const verifier = verifierOf(hubKey);
  const opened = openNote(note, [verifier]);
  const checkpoint = parseCheckpoint(opened.text);
  if (checkpoint.origin !== verifier.name)
    throw new HubClientError(
      'hub-key',
      `the checkpoint is of log ${checkpoint.origin}, the key is ${verifier.name}'s`,
    );
  return { ...checkpoint, note };
}

export async function fetchCheckpoint(
  hub: string,
  hubKey: string | NoteVerifier,
): Promise<VerifiedCheckpoint> {
  const response = await hubRequest(hubUrl(hub, '/log/checkpoint'));
  if (response.status !== 200)
    throw new HubClientError('bad-answer', `${hub} has no checkpoint (${response.status})`);
  return openCheckpoint(response.body.toString('utf8'), hubKey);
}
