/** `tally session start`: a new session under an agent's certificate, with the start baseline. */
import { resolve } from 'node:path';
import { resolveAgent } from '../../../session/agents.js';
import { defaultTrustedKeys } from '../../../session/identity.js';
import { startSession } from '../../../session/lifecycle.js';
import { sessionRootFor } from '../../../session/paths.js';
import { currentSession } from '../../../session/store.js';
import { type Command, parseFlags, printJson, UsageError } from '../../command.js';
import { placesOf, signerOf } from '../../session-context.js';

export const command: Command = {
  summary: 'start a session (baseline, certificate and registration bound)',
  usage: [
    'usage: tally session start [--agent NAME] [--model M] [--provider P] [--registration FILE] [--json]',
    '',
    '  --agent NAME         the agent the session is for; its certificate (agents/NAME.agent.json, or a',
    '                       file path) is verified and bound to the session: the live policy comes from it',
    '  --registration FILE  hook registration to bind (default: the project’s .tally/hooks.json, if any)',
    '',
    'Prints the session id on stdout.',
  ].join('\n'),
  async run(argv, ctx) {
    const { values, positionals } = parseFlags(argv, {
      agent: { type: 'string' },
      model: { type: 'string' },
      provider: { type: 'string' },
      registration: { type: 'string' },
      json: { type: 'boolean' },
    });
    if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
    const where = placesOf(ctx);
    const open = currentSession(where.state);
    if (open)
      throw new UsageError(`session ${open} is still open here; close it first ('tally session close')`);
    const signer = await signerOf(ctx, where);
    const resolved = values.agent
      ? resolveAgent(
          where,
          ctx.cwd,
          values.agent,
          defaultTrustedKeys(where).map((k) => k.publicKey),
          new Date(),
        )
      : undefined;
    if (resolved?.warning) ctx.stderr(`warning: ${resolved.warning}\n`);
    const agent = resolved?.agent;
    if (agent && values.model) agent.model = values.model;
    if (agent && values.provider) agent.provider = values.provider;
    const root = sessionRootFor(where, ctx.cwd);
    const { info } = await startSession({
      state: where.state,
      refuseWhileOpen: true,
      root,
      signer,
      ...(agent ? { agent } : {}),
      ...(resolved?.certificatePath ? { certificatePath: resolved.certificatePath } : {}),
      ...(values.registration ? { registrationPath: resolve(ctx.cwd, values.registration) } : {}),
    });
    if (values.json)
      printJson(ctx, {
        session: info.id,
        state: info.state,
        root: info.root,
        agent: info.agent ?? null,
        certificate: resolved?.certificatePath ?? null,
        registration: info.registration ?? null,
      });
    else {
      ctx.stderr(
        `started session ${info.id}${agent ? ` for agent ${agent.name}` : ''}${resolved?.certificatePath ? ' (policy from its certificate)' : ''}${info.registration ? ' with its hook registration' : ''}\n`,
      );
      ctx.stdout(`${info.id}\n`);
    }
    return 0;
  },
};
