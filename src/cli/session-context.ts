/** What commands that act for a project need: its places, its signer, a passphrase when asked. */
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { loadShipSigner, type ShipSigner } from '../session/identity.js';
import { type Places, places } from '../session/paths.js';
import type { CommandContext } from './command.js';

export function placesOf(ctx: CommandContext): Places {
  return places(ctx.cwd, ctx.env);
}

/** TALLY_PASSPHRASE, else a prompt with echo off when a person is at a terminal. */
export async function passphrase(
  ctx: CommandContext,
  prompt = 'passphrase for the ship key: ',
): Promise<string | undefined> {
  if (ctx.env.TALLY_PASSPHRASE !== undefined) return ctx.env.TALLY_PASSPHRASE;
  if (!process.stdin.isTTY || !ctx.isTTY) return undefined;
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
      process.stderr.write('\n');
      resolve(answer);
    });
    muted = true;
  });
}

export function signerOf(ctx: CommandContext, where: Places = placesOf(ctx)): Promise<ShipSigner> {
  return loadShipSigner(where, () => passphrase(ctx));
}
