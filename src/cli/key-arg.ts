/** A public key named on the command line by its file (a tally public or private key file). */
import type { KeyObject } from 'node:crypto';
import { resolve } from 'node:path';
import { readPublicKeyFile } from '../core/keystore.js';
import { type CommandContext, UsageError } from './command.js';

export function publicKeyFromFile(ctx: CommandContext, positionals: string[]): KeyObject {
  if (positionals.length !== 1) throw new UsageError('give exactly one key file');
  const file = resolve(ctx.cwd, positionals[0]!);
  try {
    return readPublicKeyFile(file);
  } catch (error) {
    throw new UsageError(`${file} is not a tally key file: ${(error as Error).message}`);
  }
}
