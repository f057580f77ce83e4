/** `tally hub ls --hub URL [packages|certificates|agents|ships]`: one page, or all with --all. */
import { followLink, hubJson, hubUrl } from '../../../hub-client/http.js';
import { type Command, parseFlags, printJson, UsageError } from '../../command.js';

const KINDS = ['packages', 'certificates', 'agents', 'ships'] as const;
type Kind = (typeof KINDS)[number];

function row(kind: Kind, item: Record<string, unknown>): string {
  switch (kind) {
    case 'packages':
      return `${item.session}  ${item.agent ?? '-'}  ${item.ship_id}  ${item.record_count} records  ${item.started_at ?? ''}  #${item.log_index}`;
    case 'certificates':
      return `${item.serial}  ${item.agent}  ${item.ship_id}  ${item.valid_from} → ${item.valid_until}  #${item.log_index}`;
    case 'agents':
      return `${item.slug}  ${item.ship_id}  since ${item.first_seen}`;
    case 'ships':
      return `${item.ship_id}  ${item.key_id}  since ${item.registered_at}`;
  }
}

export const command: Command = {
  summary: 'list what a hub holds',
  usage: [
    'usage: tally hub ls --hub URL [packages|certificates|agents|ships] [--agent A] [--ship S]',
    '                    [--since RFC3339] [--until RFC3339] [--limit N] [--all] [--json]',
    '',
    'Newest first. --all follows the next links (same origin only) to the end.',
  ].join('\n'),
  async run(argv, ctx) {
    const { values, positionals } = parseFlags(argv, {
      hub: { type: 'string' },
      agent: { type: 'string' },
      ship: { type: 'string' },
      since: { type: 'string' },
      until: { type: 'string' },
      limit: { type: 'string' },
      all: { type: 'boolean' },
      json: { type: 'boolean' },
    });
    if (values.hub === undefined) throw new UsageError('--hub URL is required');
    const kind = (positionals[0] ?? 'packages') as Kind;
    if (!KINDS.includes(kind)) throw new UsageError(`list one of: ${KINDS.join(', ')}`);
    const query = new URLSearchParams();
    for (const name of ['agent', 'ship', 'since', 'until', 'limit'] as const) {
      const value = values[name];
      if (value !== undefined) query.set(name, value);
    }
    const items: Record<string, unknown>[] = [];
    let link: { url: string; untrusted: boolean } | null = {
      url: hubUrl(values.hub, `/v1/${kind}?${query}`),
      untrusted: false,
    };
    while (link) {
      const answer: { json: { items: Record<string, unknown>[]; next: string | null } } = await hubJson(
        link.url,
        {
          untrusted: link.untrusted,
        },
      );
      const json = answer.json;
      items.push(...json.items);
      link = values.all && json.next ? followLink(values.hub, json.next) : null;
    }
    if (values.json) printJson(ctx, { hub: values.hub, kind, items });
    else {
      for (const item of items) ctx.stdout(`${row(kind, item)}\n`);
      ctx.stderr(`${items.length} ${kind}\n`);
    }
    return 0;
  },
};
