/**
 * `tally session event`: one AHP event from stdin through the boundary. An event that can still be
 * stopped is judged (the certificate and every registered backend), recorded, and answered by the
 * exit code; any other is recorded.
 */

import { BoundaryError } from '../../../boundary/prepare.js';
import { parseJson } from '../../../core/canonical.js';
import { firstBadUtf8Byte } from '../../../core/utf8.js';
import { openSession } from '../../../session/lifecycle.js';
import { resolveSession } from '../../../session/store.js';
import { type Command, parseFlags, printJson, UsageError } from '../../command.js';
import { harnessLogger } from '../../harness-logger.js';
import { type CliRecorded, recordFromCli } from '../../record-event.js';
import { placesOf, signerOf } from '../../session-context.js';

const SOURCE = /^[a-z][a-z0-9-]{0,31}$/;

export const command: Command = {
  summary: 'record one AHP event from stdin (judged when it can still be stopped)',
  usage: [
    'usage: tally session event [--source LABEL] [--agent NAME] [--session ID] [--json]',
    '',
    'Reads one AHP canonical event (JSON) on stdin. An interceptable event (tool.before, …) is judged by',
    "the session's certificate and every backend of its registration, recorded with every answer, and",
    'answered: exit 0 allowed (or asked), 1 denied. Any other event is recorded. Input that is not a',
    'valid event is recorded as tally.ingest.rejected (its digest, never its bytes) and exits 2.',
    '',
    '  --source LABEL  how it was captured: hook, ahp, mcp, wrap, cli (default); git-reconcile and',
    "                  transcript are the close's own and refused",
  ].join('\n'),
  async run(argv, ctx) {
    const { values, positionals } = parseFlags(argv, {
      source: { type: 'string' },
      agent: { type: 'string' },
      session: { type: 'string' },
      json: { type: 'boolean' },
    });
    if (positionals.length > 0) throw new UsageError(`unexpected argument '${positionals[0]}'`);
    const source = values.source ?? 'cli';
    if (!SOURCE.test(source))
      throw new UsageError('--source must be a short lowercase label (hook, ahp, mcp, wrap, cli…)');
    const where = placesOf(ctx);
    const session = resolveSession(where.state, values.session);
    const bytes = await ctx.stdin();
    if (bytes.toString('utf8').trim().length === 0)
      throw new UsageError('expected one AHP canonical event as JSON on stdin');
    // Another agent named here (a subagent, a second tool) does not inherit the session agent's model.
    const agent = values.agent
      ? session.agent?.name === values.agent
        ? session.agent
        : { name: values.agent }
      : undefined;
    let raw: unknown;
    const badByte = firstBadUtf8Byte(bytes);
    try {
      if (badByte !== undefined) throw new Error(`the bytes are not UTF-8 at byte ${badByte}`);
      raw = parseJson(bytes);
    } catch (error) {
      // Input that is not even JSON is still recorded, as rejected: nothing is dropped silently.
      const open = await openSession({
        state: where.state,
        session,
        signer: await signerOf(ctx, where),
        harness: { env: ctx.env, logger: harnessLogger(ctx) },
      });
      try {
        const offset = badByte ?? (error as { detail?: { byte?: number } }).detail?.byte;
        await open.boundary.reject(
          {
            received: bytes,
            reason: (error as Error).message,
            source,
            ...(offset !== undefined ? { offset } : {}),
          },
          { source },
        );
      } finally {
        await open.close();
      }
      throw new UsageError(`stdin is not a JSON event (recorded as rejected): ${(error as Error).message}`);
    }
    let result: CliRecorded;
    try {
      result = await recordFromCli(ctx, where, session, raw, { source, ...(agent ? { agent } : {}) });
    } catch (error) {
      if (error instanceof BoundaryError && (error.code === 'bad-event' || error.code === 'close-source'))
        throw new UsageError(error.message);
      throw error;
    }
    const decision = result.decision;
    if (values.json)
      printJson(ctx, {
        seq: result.seq,
        id: result.event.id,
        type: result.event.type,
        decision: decision
          ? {
              decision: decision.decision,
              permission: decision.permission,
              by: decision.by ?? null,
              reason: decision.reason ?? null,
              rule: decision.rule ?? null,
              answers: decision.answers,
            }
          : null,
      });
    else {
      if (result.unknownFields.length > 0)
        ctx.stderr(`kept fields this AHP snapshot does not define: ${result.unknownFields.join(', ')}\n`);
      ctx.stdout(`${result.seq}\n`);
      if (decision && decision.permission !== 'none')
        ctx.stderr(
          `decision: ${decision.decision} by ${decision.by}${decision.reason ? ` (${decision.reason}${decision.rule ? `: ${decision.rule}` : ''})` : ''}\n`,
        );
    }
    // Recorded either way; a deny is a policy failure, so scripts can gate on it.
    if (decision?.decision === 'deny') return 1;
    return 0;
  },
};
