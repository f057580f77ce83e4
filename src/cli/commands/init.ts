/**
 * `tally init [--global] [--encrypt] [--adopt]`: the user's ship key in `TALLY_HOME/keys/` (created
 * once, never replaced) pinned in `TALLY_HOME/trust/`, and — unless `--global` — the project's
 * `.tally/` with only the public key (committable) and a `.gitignore` for session state. A project
 * that still keeps a private key in its tree is migrated out of it, saying so.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KeyError } from '../../core/keys.js';
import { createKey, keyPaths, loadPublicKey, type StoredKey } from '../../core/keystore.js';
import { pinKey, projectPublicKey, SHIP_KEY } from '../../session/identity.js';
import { places, projectRootFor, tallyHome } from '../../session/paths.js';
import { type Command, type CommandContext, parseFlags, printJson } from '../command.js';
import { passphrase } from '../session-context.js';

const GITIGNORE =
  '# session state, the recorder’s run files and spool stay out of version control\nsessions/\nrun/\nspool/\n*.key.json\n';

/** Moves an old-layout private key out of the project tree; returns what was done, for the user. */
function migrate(project: string, home: string, homeKey: StoredKey | null, adopt: boolean): string | null {
  const tree = keyPaths(project, SHIP_KEY);
  if (!existsSync(tree.privatePath)) return null;
  const inTree = loadPublicKey(project, SHIP_KEY);
  const target = keyPaths(home, SHIP_KEY);
  mkdirSync(join(home, 'keys'), { recursive: true, mode: 0o700 });
  if (homeKey === null) {
    renameSync(tree.privatePath, target.privatePath);
    writeFileSync(target.publicPath, readFileSync(tree.publicPath));
    return `moved the ship's private key ${inTree.keyId} out of the project tree to ${target.privatePath} (an agent can write the tree)`;
  }
  if (homeKey.keyId === inTree.keyId) {
    rmSync(tree.privatePath);
    return `removed the project tree's copy of the ship's private key (${inTree.keyId} stays in ${target.privatePath})`;
  }
  if (!adopt)
    throw new KeyError(
      'mismatch',
      `this project keeps its own private ship key ${inTree.keyId} in its tree, and your ship key is ${homeKey.keyId}: run 'tally init --adopt' to move the project's key aside (${join(home, 'keys', `ship-${inTree.keyId}.key.json`)}) and sign for it with yours`,
    );
  renameSync(tree.privatePath, join(home, 'keys', `ship-${inTree.keyId}.key.json`));
  rmSync(tree.publicPath, { force: true });
  return `moved the project's own private key ${inTree.keyId} aside to ${join(home, 'keys')}; this project is now signed for by ${homeKey.keyId}`;
}

async function homeShipKey(
  ctx: CommandContext,
  home: string,
  encrypt: boolean,
): Promise<{ key: StoredKey; created: boolean }> {
  try {
    return { key: loadPublicKey(home, SHIP_KEY), created: false };
  } catch (error) {
    if ((error as KeyError).code !== 'not-found') throw error;
  }
  const secret = encrypt ? await passphrase(ctx, 'new passphrase for the ship key: ') : undefined;
  if (encrypt && !secret)
    throw new KeyError(
      'passphrase-required',
      '--encrypt needs a passphrase: at a terminal, or over a file descriptor (TALLY_PASSPHRASE_FD=N)',
    );
  return {
    key: createKey(home, SHIP_KEY, secret === undefined ? {} : { passphrase: secret }),
    created: true,
  };
}

export const command: Command = {
  summary: 'create (once) your ship key outside the tree and the project’s .tally/ with its public key',
  usage: [
    'usage: tally init [--global] [--encrypt] [--adopt] [--json]',
    '',
    'Creates your ship key (Ed25519, 0600) in $TALLY_HOME/keys/ (default ~/.tally) if there is none,',
    'pins its public key in $TALLY_HOME/trust/, and (unless --global) creates .tally/ at the git top',
    'level with the public key only (committable) and a .gitignore for session state. Never replaces',
    'a key. A private key found in the project tree is moved out of it (reported). --encrypt',
    'protects a new key with a passphrase, asked at a terminal or read from TALLY_PASSPHRASE_FD.',
    '--adopt: the project’s committed public key is not yours — sign for the project with your key.',
  ].join('\n'),
  async run(argv, ctx) {
    const { values } = parseFlags(argv, {
      global: { type: 'boolean' },
      encrypt: { type: 'boolean' },
      adopt: { type: 'boolean' },
      json: { type: 'boolean' },
    });
    const home = tallyHome(ctx.env);
    const project = values.global ? null : join(projectRootFor(ctx.cwd), '.tally');
    const notes: string[] = [];
    let existing: StoredKey | null = null;
    try {
      existing = loadPublicKey(home, SHIP_KEY);
    } catch (error) {
      if ((error as KeyError).code !== 'not-found') throw error;
    }
    if (project) {
      const moved = migrate(project, home, existing, values.adopt === true);
      if (moved) notes.push(moved);
    }
    const { key, created } = await homeShipKey(ctx, home, values.encrypt === true);
    const pinned = pinKey(home, key.publicKey);
    if (project) {
      mkdirSync(join(project, 'keys'), { recursive: true, mode: 0o755 });
      const committed = projectPublicKey(places(project, ctx.env));
      if (committed !== null && committed.keyId !== key.keyId && !values.adopt)
        throw new KeyError(
          'mismatch',
          `this project's committed ship key is ${committed.keyId} (${committed.path}), not yours (${key.keyId}); it is never overwritten: use the ship it names, or 'tally init --adopt' to sign for the project with your key`,
        );
      if (committed === null || committed.keyId !== key.keyId) {
        writeFileSync(
          keyPaths(project, SHIP_KEY).publicPath,
          readFileSync(keyPaths(home, SHIP_KEY).publicPath),
        );
        notes.push(`wrote the project's public key ${keyPaths(project, SHIP_KEY).publicPath} (commit it)`);
      }
      if (!existsSync(join(project, '.gitignore'))) writeFileSync(join(project, '.gitignore'), GITIGNORE);
    }
    const out = {
      home,
      project,
      created,
      key_id: key.keyId,
      ship_id: key.shipId,
      encrypted: key.encrypted,
      pinned,
      notes,
    };
    if (values.json) printJson(ctx, out);
    else {
      ctx.stderr(
        `${created ? 'created' : 'kept'} your ship key in ${join(home, 'keys')}${key.encrypted ? ' (encrypted)' : ''}\n`,
      );
      ctx.stderr(`  ship id  ${key.shipId}\n  key id   ${key.keyId}\n  pinned   ${pinned}\n`);
      for (const note of notes) ctx.stderr(`  ${note}\n`);
    }
    return 0;
  },
};
