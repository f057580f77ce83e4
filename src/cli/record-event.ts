/**
 * Recording one event from a CLI command into a session: through the recorder when it holds the
 * session (it is then the session's only writer), else through the session's own boundary.
 */
import { catalogueEntry } from '../ahp/protocol/catalogue.js';
import type { BoundaryDecision } from '../boundary/boundary.js';
import { tallyHome } from '../core/home.js';
import type { AgentAttribution } from '../evidence/record/record.js';
import { expectOk, RecorderClient } from '../recorder/client.js';
import { recordEvent } from '../session/lifecycle.js';
import type { Places } from '../session/paths.js';
import type { SessionInfo } from '../session/store.js';
import type { CommandContext } from './command.js';
import { harnessLogger } from './harness-logger.js';
import { signerOf } from './session-context.js';

export type CliRecorded = Awaited<ReturnType<typeof recordEvent>>;

export async function recordFromCli(
  ctx: CommandContext,
  where: Places,
  session: SessionInfo,
  event: unknown,
  options: { source: string; agent?: AgentAttribution },
): Promise<CliRecorded> {
  const recorder = await RecorderClient.holding(tallyHome(ctx.env), session.id, ctx.env);
  if (recorder) return ingestThroughRecorder(recorder, session.id, event, options.source, ctx.cwd);
  return recordEvent({
    state: where.state,
    session,
    signer: await signerOf(ctx, where),
    event,
    source: options.source,
    harness: { env: ctx.env, logger: harnessLogger(ctx) },
    ...(options.agent ? { agent: options.agent } : {}),
  });
}

async function ingestThroughRecorder(
  recorder: RecorderClient,
  session: string,
  event: unknown,
  source: string,
  cwd: string,
): Promise<CliRecorded> {
  const type = (event as { type?: unknown } | null)?.type;
  const mode = typeof type === 'string' && catalogueEntry(type)?.interceptable ? 'decide' : 'observe';
  const reply = expectOk(
    await recorder.request('POST', '/ingest', {
      source,
      mode,
      event,
      cwd,
      session,
      harness_session: `cli-${session}`,
    }),
    'recording the event',
  ) as { decision: BoundaryDecision | null; recorded: { seq: number; digest: string } | null };
  const decision = reply.decision ?? undefined;
  const recorded = reply.recorded ?? decision?.recorded ?? { seq: -1, digest: '' };
  return {
    seq: recorded.seq,
    unknownFields: decision?.unknownFields ?? [],
    event: event as { id?: unknown; type?: unknown },
    recorded,
    ...(decision ? { decision } : {}),
  };
}
