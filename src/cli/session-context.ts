/** What commands that act for a project need: its places, its signer, a passphrase when asked. */
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { loadPrivateKey } from '../core/keystore.js';
import { loadShipSigner, SHIP_KEY, type ShipSigner, shipKeyDir } from '../session/identity.js';
import { type Places, places } from '../session/paths.js';
import { type CommandContext, UsageError } from './command.js';

export function placesOf(ctx: CommandContext): Places {
  return places(ctx.cwd, ctx.env);
}

let handedOver: string | undefined;

/**
 * The ship key's passphrase: read once from the file descriptor a parent process handed over
 * (`TALLY_PASSPHRASE_FD=N`, one line), else asked with echo off when a person is at a terminal.
 * Never from an environment variable's value or a file: the agent could read either.
 */
export async function passphrase(
  ctx: CommandContext,
  prompt = 'passphrase for the ship key: ',
): Promise<string | undefined> {
  if (ctx.env.TALLY_PASSPHRASE !== undefined)
    throw new UsageError(
      'TALLY_PASSPHRASE is not read (an agent can read the environment): give the passphrase at a terminal, or over a file descriptor with TALLY_PASSPHRASE_FD=N',
    );
  const fd = ctx.env.TALLY_PASSPHRASE_FD;
  if (fd !== undefined) {
    if (handedOver === undefined) {
      if (!/^\d+$/.test(fd) || Number(fd) < 3)
        throw new UsageError('TALLY_PASSPHRASE_FD must name an open file descriptor, 3 or above');
      try {
        handedOver = readFileSync(Number(fd), 'utf8').split('\n')[0] ?? '';
      } catch (error) {
        throw new UsageError(
          `cannot read the passphrase from file descriptor ${fd}: ${(error as NodeJS.ErrnoException).code}`,
        );
      }
    }
    return handedOver;
  }
  if (!atTerminal(ctx)) return undefined;
  return askAtTerminal(prompt, { echo: false });
}

/** True when a person can answer: both stdin and the command's stderr are a terminal. */
export function atTerminal(ctx: CommandContext): boolean {
  return Boolean(process.stdin.isTTY) && ctx.isTTY;
}

/** One line typed at the terminal (stdin), the prompt on stderr; `echo: false` for secrets. */
export function askAtTerminal(prompt: string, options: { echo: boolean }): Promise<string> {
  let muted = false;
  const output = new Writable({
    write(chunk, _encoding, done) {
      if (!muted) process.stderr.write(chunk);
      done();
    },
  });
  const rl = createInterface({ input: process.stdin, output, terminal: true });
  return new Promise((resolve) => {
    rl.question(prompt, (answer) => {
      rl.close();
      if (!options.echo) process.stderr.write('\n');
      resolve(answer);
    });
    muted = !options.echo;
  });
}

export function signerOf(ctx: CommandContext, where: Places = placesOf(ctx)): Promise<ShipSigner> {
  return loadShipSigner(where, () => passphrase(ctx));
}

/**
 * What a recorder this command starts needs to sign: the ship key's passphrase when the key is
 * encrypted (asked here, at the terminal, and handed to the recorder over a pipe), else nothing.
 */
export async function recorderPassphrase(ctx: CommandContext, where: Places): Promise<string | undefined> {
  try {
    loadPrivateKey(shipKeyDir(where), SHIP_KEY);
    return undefined;
  } catch (error) {
    if ((error as { code?: string }).code !== 'passphrase-required') return undefined;
  }
  return passphrase(ctx);
}
