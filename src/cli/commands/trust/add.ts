/** `tally trust add FILE`: pin another ship's public key (a .pub.json or .key.json file). */
import { tallyHome } from '../../../core/home.js';
import { keyId, shipId } from '../../../core/keys.js';
import { pinKey } from '../../../session/identity.js';
import { type Command, parseFlags, printJson } from '../../command.js';
import { publicKeyFromFile } from '../../key-arg.js';

export const command: Command = {
  summary: "pin a ship's public key: verify trusts what it signed",
  usage: [
    'usage: tally trust add FILE [--json]',
    '',
    'Pins the public key in FILE (a tally public or private key file) in $TALLY_HOME/trust/. Check its',
    'fingerprint (the key id printed) with its owner through another channel first: a key that arrives',
    'with the package or in the repository being reviewed proves nothing by itself.',
  ].join('\n'),
  async run(argv, ctx) {
    const { values, positionals } = parseFlags(argv, { json: { type: 'boolean' } });
    const publicKey = publicKeyFromFile(ctx, positionals);
    const path = pinKey(tallyHome(ctx.env), publicKey);
    const out = { key_id: keyId(publicKey), ship_id: shipId(publicKey), pinned: path };
    if (values.json) printJson(ctx, out);
    else ctx.stderr(`pinned ${out.key_id} (ship ${out.ship_id}) in ${path}\n`);
    return 0;
  },
};
