/**
 * A small real stdio backend whose behaviour is chosen by argv[2], for transport and fault tests.
 * It answers `hooks/intercept` lines on stdout and writes chatter on stderr, like a real backend.
 *
 *   echo                answer every request with no effects (and echo params under result.echo)
 *   env                 answer with result.env (its whole environment) and result.cwd
 *   hang                read requests and never answer
 *   slow MS             answer each request after MS milliseconds
 *   garbage             answer with a line that is not JSON
 *   twice               answer every request twice
 *   wrong-id            answer with a different id
 *   unknown-first       write an answer with an unknown id, then the real answer
 *   flood               write 20 answers with unknown ids, never the real one
 *   lifecycle FILE ROW  play row ROW of FILE (lifecycle-scenarios.json) for each request: the
 *                       row's `emit` lines scripted between `wait` and `release` of its key,
 *                       then the row's response for that key, untouched
 *   exit CODE           exit with CODE on the first request, without answering
 *   crash-once MARKER   exit 1 on the first request if MARKER does not exist (creating it), else echo
 *   huge BYTES          answer with a line of about BYTES bytes
 *   unadvertised        answer every request with an `allow` effect, whatever was advertised
 *   scripted FILE       answer with the `response` of the row of FILE (scenarios.json) with the same event id, untouched
 *   one-shot CODE       per_event: answer the one request, then exit with CODE
 *   silent-exit         per_event: read the request, exit 0 without answering
 *   two-lines           per_event: write two answers, exit 0
 *   no-newline          per_event: write the answer without a trailing newline, exit 0
 *   stubborn            ignore SIGTERM and a closed stdin; never answer (only SIGKILL ends it)
 *   notify-log FILE     append every received line to FILE; answer requests with no effects
 *   holder FILE         start a process that inherits this one's stdout and stderr and outlives
 *                       it (its pid written to FILE); never answer
 *   holder-answer FILE  per_event: the same holder, then answer the one request and exit 0
 */
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';

const [mode = 'echo', arg = ''] = process.argv.slice(2);
process.stderr.write(`fault-backend ${mode} starting; this line is diagnostics, not protocol\n`);

const answer = (id: unknown, result: Record<string, unknown> = {}) =>
  `${JSON.stringify({ jsonrpc: '2.0', id, result: { protocolVersion: 'draft', effects: [], ...result } })}\n`;

let pending = 0;
if (mode === 'holder' || mode === 'holder-answer') {
  // A helper the backend leaves behind, holding the backend's stdout and stderr open.
  const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 120000)'], {
    stdio: ['ignore', 'inherit', 'inherit'],
    detached: true,
  });
  holder.unref();
  writeFileSync(arg, String(holder.pid));
}
if (mode === 'stubborn' || mode === 'hang' || mode === 'holder') {
  if (mode === 'stubborn') process.on('SIGTERM', () => process.stderr.write('ignoring SIGTERM\n'));
  setInterval(() => {}, 60_000);
}

let scripted: Map<unknown, unknown> | undefined;
if (mode === 'scripted') {
  type Row = { request: { params: { event: { id: unknown } } }; response: unknown };
  const doc = JSON.parse(readFileSync(arg, 'utf8')) as { scenarios: Row[] };
  // Keyed by event id, which the protocol makes equal to the request id.
  scripted = new Map(doc.scenarios.map((s) => [s.request.params.event.id, s.response]));
}

let lifecycle: ((id: unknown) => unknown[]) | undefined;
if (mode === 'lifecycle') {
  type Step = { op: string; key?: string; response?: unknown };
  type Row = {
    id: string;
    requests: Record<string, { id: unknown }>;
    responses: Record<string, unknown>;
    steps: Step[];
  };
  const doc = JSON.parse(readFileSync(arg, 'utf8')) as { scenarios: Row[] };
  const row = doc.scenarios.find((r) => r.id === process.argv[4]);
  if (!row) throw new Error(`no lifecycle row ${process.argv[4]}`);
  lifecycle = (id) => {
    const key = Object.keys(row.requests).find((k) => row.requests[k]?.id === id);
    if (key === undefined) return [];
    // The emits the row scripts while this key is held: after its `wait`, before its `release`.
    const held = row.steps.slice(row.steps.findIndex((s) => s.op === 'wait' && s.key === key));
    const emits = held.slice(
      0,
      held.findIndex((s) => s.op === 'release' && s.key === key),
    );
    return [...emits.filter((s) => s.op === 'emit').map((s) => s.response), row.responses[key]];
  };
}

function onLine(line: string): void {
  if (mode === 'notify-log') appendFileSync(arg, `${line}\n`);
  const message = JSON.parse(line) as { id?: unknown; params?: unknown };
  process.stderr.write(`fault-backend got ${line.length} bytes\n`);
  if (!('id' in message)) return; // notifications are never answered
  const id = message.id;
  switch (mode) {
    case 'echo':
    case 'notify-log':
      process.stdout.write(answer(id, mode === 'echo' ? { echo: message.params, pid: process.pid } : {}));
      return;
    case 'env':
      process.stdout.write(answer(id, { env: process.env, cwd: process.cwd() }));
      return;
    case 'hang':
      return;
    case 'slow': {
      // overlap: another request arrived while this one was outstanding (the binding forbids it).
      const overlap = pending > 0;
      pending++;
      setTimeout(() => {
        pending--;
        process.stdout.write(answer(id, { overlap }));
      }, Number(arg));
      return;
    }
    case 'stubborn':
    case 'holder':
      return;
    case 'holder-answer':
      process.stdout.write(answer(id), () => process.exit(0));
      return;
    case 'garbage':
      process.stdout.write('this is not json at all\n');
      return;
    case 'twice':
      process.stdout.write(answer(id) + answer(id));
      return;
    case 'wrong-id':
      process.stdout.write(answer(`${String(id)}-other`));
      return;
    case 'unknown-first':
      process.stdout.write(answer(`unknown:${String(id)}`) + answer(id));
      return;
    case 'flood':
      for (let i = 0; i < 20; i++) process.stdout.write(answer(`unknown:${i}`));
      return;
    case 'lifecycle':
      for (const line of lifecycle!(id)) process.stdout.write(`${JSON.stringify(line)}\n`);
      return;
    case 'exit':
      process.exit(Number(arg));
      return;
    case 'crash-once':
      if (!existsSync(arg)) {
        writeFileSync(arg, 'crashed\n');
        process.exit(1);
      }
      process.stdout.write(answer(id, { pid: process.pid }));
      return;
    case 'huge':
      process.stdout.write(answer(id, { padding: 'x'.repeat(Number(arg)) }));
      return;
    case 'unadvertised':
      process.stdout.write(
        `${JSON.stringify({ jsonrpc: '2.0', id, result: { protocolVersion: 'draft', effects: [{ type: 'allow' }] } })}\n`,
      );
      return;
    case 'scripted':
      process.stdout.write(
        `${JSON.stringify(scripted!.get((message.params as { event?: { id?: unknown } } | undefined)?.event?.id))}\n`,
      );
      return;
    case 'one-shot':
      process.stdout.write(answer(id), () => process.exit(Number(arg)));
      return;
    case 'silent-exit':
      process.exit(0);
      return;
    case 'two-lines':
      process.stdout.write(answer(id) + answer(id));
      return;
    case 'no-newline':
      process.stdout.write(answer(id).trimEnd());
      return;
    default:
      process.stderr.write(`unknown mode ${mode}\n`);
      process.exit(64);
  }
}

let buffered = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk: string) => {
  buffered += chunk;
  let nl = buffered.indexOf('\n');
  while (nl >= 0) {
    const line = buffered.slice(0, nl);
    buffered = buffered.slice(nl + 1);
    if (line.length > 0) onLine(line);
    nl = buffered.indexOf('\n');
  }
});
process.stdin.on('end', () => {
  if (mode !== 'hang' && mode !== 'slow') process.exitCode ??= 0;
});
