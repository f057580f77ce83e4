/**
 * The live witness of a session the recorder holds: the hub its chain heads go to, kept with the
 * session (`sessions/<id>/witness.json`), so a recorder started again after one was killed or
 * crashed goes on witnessing it, its seal included.
 */
import { join } from 'node:path';
import type { Logger } from '../ahp/transports/options.js';
import { TallyError } from '../core/errors.js';
import { readRegularFileSync, writeRegularFileSync } from '../core/regular-file.js';
import { registerShip } from '../hub-client/push.js';
import { createWitness, type Witness } from '../hub-client/witness.js';
import type { ShipSigner } from '../session/identity.js';
import { sessionDir } from '../session/store.js';

/** Heads go to the hub every this many records unless the run says otherwise. */
export const DEFAULT_WITNESS_EVERY = 32;

/** A hub to send a session's chain heads to while it runs (`tally run --witness URL`). */
export interface WitnessOptions {
  hub: string;
  /** Every how many records a head is sent (the first and the last always are). */
  every: number;
}

export interface WitnessSummary {
  /** The seq of the last record whose head was offered (session.end). */
  sent_to_last: number;
  /** The heads the hub did not accept, in order. */
  failures: string[];
}

/** A witness file is a hub URL and a number: a few hundred bytes. */
const WITNESS_FILE_LIMIT = 64 * 1024;

function readWitness(path: string, logger: Logger): WitnessOptions | undefined {
  let reason = 'is not a witness file';
  try {
    const value = JSON.parse(
      readRegularFileSync(path, WITNESS_FILE_LIMIT).toString('utf8'),
    ) as WitnessOptions;
    if (typeof value.hub === 'string' && Number.isInteger(value.every) && value.every >= 1) return value;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    if (error instanceof TallyError) reason = `cannot be read (${error.message})`;
  }
  logger('warn', `witness: ${path} ${reason}; this session's heads are not sent`);
  return undefined;
}

/**
 * The witness of session `id` in `state`: to the hub asked for now (kept with the session), else
 * to the one kept when it started; none when neither was asked for.
 */
export async function sessionWitness(options: {
  state: string;
  id: string;
  signer: () => Promise<ShipSigner>;
  logger: Logger;
  asked?: WitnessOptions | undefined;
}): Promise<Witness | undefined> {
  const file = join(sessionDir(options.state, options.id), 'witness.json');
  if (options.asked) writeRegularFileSync(file, `${JSON.stringify(options.asked)}\n`, 0o600);
  const to = options.asked ?? readWitness(file, options.logger);
  if (!to) return undefined;
  const signer = await options.signer();
  return createWitness({
    hub: to.hub,
    signer,
    session: options.id,
    every: to.every,
    // A hub takes heads from ships it knows: registering is idempotent ('exists').
    ready: registerShip(to.hub, signer),
  });
}

/** Tells the witness of every record once it is durable. */
export const witnessHook =
  (witness: Witness) =>
  (recorded: { seq: number; digest: string }, time: Date): void =>
    witness.record(recorded.seq, recorded.digest, time);

/** The last head (session.end) goes out before a close answers; failures are said, not thrown. */
export async function flushWitness(
  witness: Witness,
  id: string,
  records: number,
  logger: Logger,
): Promise<WitnessSummary> {
  const failures = await witness.flush();
  for (const failure of failures)
    logger('warn', `witness: a chain head of ${id} was not accepted: ${failure.message}`);
  return { sent_to_last: records - 1, failures: failures.map((f) => f.message) };
}
