/** `tally init [--global]`: create the ship key (project `.tally/` or the Tally home). Never replaces a key. */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KeyError } from '../../core/keys.js';
import { createKey, loadPublicKey, type StoredKey } from '../../core/keystore.js';
import { SHIP_KEY } from '../../session/identity.js';
import { projectRootFor, tallyHome } from '../../session/paths.js';
import { type Command, parseFlags, printJson } from '../command.js';
import { passphrase } from '../session-context.js';

export const command: Command = {
  summary: 'create the ship key for this project (or --global for the Tally home)',
  usage: [
    'usage: tally init [--global] [--encrypt] [--json]',
    '',
    'Creates .tally/ at the git top level (or here) with a new Ed25519 ship key, 0600.',
    'With --global the key goes to $TALLY_HOME (default ~/.tally). Running it again keeps the',
    'existing key. --encrypt protects the key with a passphrase (TALLY_PASSPHRASE or a prompt).',
  ].join('\n'),
  async run(argv, ctx) {
    const { values } = parseFlags(argv, {
      global: { type: 'boolean' },
      encrypt: { type: 'boolean' },
      json: { type: 'boolean' },
    });
    const dir = values.global ? tallyHome(ctx.env) : join(projectRootFor(ctx.cwd), '.tally');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (!values.global && !existsSync(join(dir, '.gitignore'))) {
      // Keys and session state stay out of version control; packages are shared on purpose.
      writeFileSync(join(dir, '.gitignore'), 'keys/*.key.json\nsessions/\n');
    }
    let created = true;
    let key: StoredKey;
    try {
      const secret = values.encrypt ? await passphrase(ctx, 'new passphrase for the ship key: ') : undefined;
      if (values.encrypt && !secret)
        throw new KeyError('passphrase-required', '--encrypt needs TALLY_PASSPHRASE or a terminal to ask on');
      key = createKey(dir, SHIP_KEY, secret === undefined ? {} : { passphrase: secret });
    } catch (error) {
      if ((error as KeyError).code !== 'exists') throw error;
      created = false;
      key = loadPublicKey(dir, SHIP_KEY);
    }
    const out = {
      dir,
      created,
      key_id: key.keyId,
      ship_id: key.shipId,
      encrypted: key.encrypted,
      path: key.path,
    };
    if (values.json) printJson(ctx, out);
    else {
      ctx.stderr(`${created ? 'created' : 'kept existing'} ship key in ${dir}\n`);
      ctx.stderr(`  ship id  ${key.shipId}\n  key id   ${key.keyId}${key.encrypted ? ' (encrypted)' : ''}\n`);
    }
    return 0;
  },
};
