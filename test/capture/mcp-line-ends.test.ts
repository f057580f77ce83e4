/**
 * A client line the MCP gateway forwards is one message to every server, whatever its line reader.
 * The oracles are the readers themselves: Python's `io.TextIOWrapper` with universal newlines (how
 * the Python MCP SDK reads stdin: it splits at a lone CR), Python's `str.splitlines` (VT, FF, FS,
 * GS, RS, NEL, U+2028, U+2029 too), a plain LF reader (the Node SDK's), and Node's `readline` (lone
 * CR too). A line that smuggles a `tools/call` behind a CR inside a ping — JSON whitespace to the
 * gateway's parser — must reach every one of them as the ping alone, and a string holding U+2028
 * must keep its value. The real Python MCP SDK server (`MCPServer` with a `write_file` tool) is run
 * when a Python that imports `mcp` is found (`TALLY_MCP_PYTHON`, else `python3`); the real Node SDK
 * filesystem server always.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { jsonOut, makeProject, runProcess, TALLY_BIN } from '../cli/tally-process.js';
import { certify, connect, FS_SERVER, resultText, startHttpGateway, throughGateway } from './mcp-fixture.js';

/** Reads all of stdin, then reports what each Python line reader makes of it, and answers requests. */
const READERS_PY = `
import io, json, sys
data = sys.stdin.buffer.read()
def parsed(lines):
    out = []
    for line in lines:
        text = line.strip()
        if not text:
            continue
        try:
            out.append(json.loads(text))
        except ValueError as error:
            out.append({"unreadable": text[:80], "error": str(error)})
    return out
universal = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace")
text = data.decode("utf-8", errors="replace")
report = {
    "universal": parsed(list(universal)),
    "splitlines": parsed(text.splitlines()),
    "lf": parsed(text.split("\\n")),
    "bytes": data.hex(),
}
with open(sys.argv[1], "w") as log:
    json.dump(report, log)
for message in report["universal"]:
    if isinstance(message, dict) and "id" in message and "method" in message:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": {}}) + "\\n")
`;

/** The Python MCP SDK's own server with one tool that writes a file. */
const SDK_SERVER_PY = `
from pathlib import Path
from mcp.server.mcpserver import MCPServer

server = MCPServer("fs")

@server.tool()
def write_file(path: str, content: str) -> str:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(content)
    return f"wrote {path}"

server.run()
`;

const python = (() => {
  const bin = process.env.TALLY_MCP_PYTHON ?? 'python3';
  const has = (code: string) => spawnSync(bin, ['-c', code], { stdio: 'ignore' }).status === 0;
  return { bin, present: has('import io'), sdk: has('import mcp.server.mcpserver') };
})();

const smuggled = (id: number, path: string) =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"write_file","arguments":{"path":"${path}","content":"pwned"}}}`;
/** The finding's bytes: a ping whose params hold, between two CRs, a call the gateway never judged. */
const CR_SMUGGLE = `{"jsonrpc":"2.0","id":3,"method":"ping","params":{"x":\r${smuggled(4, 'protected/cr.txt')}\r}}`;
/** The same inside strings, behind each separator a Unicode-aware reader splits at. */
const stringSmuggle = (id: number, separator: string) =>
  `{"jsonrpc":"2.0","id":${id},"method":"ping","params":{"s":"${separator}{\\"jsonrpc\\":\\"2.0\\"}","t":"a${separator}b"}}`;

/** Node's readline over the bytes: a lone CR, CRLF and LF each end a line. */
async function readlineMessages(bytes: Buffer): Promise<unknown[]> {
  const out: unknown[] = [];
  const lines = createInterface({ input: Readable.from([bytes]), crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of lines) if (line.trim() !== '') out.push(JSON.parse(line));
  return out;
}

interface Report {
  universal: unknown[];
  splitlines: unknown[];
  lf: unknown[];
  bytes: string;
}

/** Every reader saw exactly `expected`; Node's readline too. */
async function assertEveryReader(report: Report, expected: unknown[]): Promise<void> {
  for (const reader of ['universal', 'splitlines', 'lf'] as const)
    assert.deepEqual(report[reader], expected, `${reader}: ${JSON.stringify(report[reader])}`);
  assert.deepEqual(await readlineMessages(Buffer.from(report.bytes, 'hex')), expected, 'readline');
}

describe('a forwarded line is one message to every line reader', {
  skip: !python.present && 'no python3',
}, () => {
  it('stdio: a CR, NEL or U+2028 inside a read line never starts a second message', async () => {
    const project = makeProject('tally-mcp-cr-');
    await certify(project, ['--allow', 'mcp__fs__*', '--forbid', 'Write(protected/**)']);
    writeFileSync(join(project.dir, 'readers.py'), READERS_PY);
    const log = join(project.dir, 'readers.json');
    const allowed = `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"notes.txt","content":"l1\u2028l2\u2029l3\u0085"}}}`;
    const sent = [
      `${CR_SMUGGLE}\n`,
      `${stringSmuggle(5, '\u2028')}\n`,
      `${stringSmuggle(6, '\u2029')}\n`,
      `${stringSmuggle(7, '\u0085')}\n`,
      // A final CRLF is the one CR kept: every reader takes it as the line's end.
      `${allowed}\r\n`,
      `${smuggled(10, 'protected/direct.txt')}\n`,
    ];
    const ran = await runProcess(
      process.execPath,
      [
        TALLY_BIN,
        'mcp',
        '--name',
        'fs',
        '--agent',
        'coder',
        '--',
        python.bin,
        join(project.dir, 'readers.py'),
        log,
      ],
      { cwd: project.root, env: project.env, stdin: sent.join('') },
    );
    assert.equal(ran.code, 0, ran.stderr);
    const report = JSON.parse(readFileSync(log, 'utf8')) as Report;
    // Every line but the denied call, each as the value the gateway judged.
    const expected = sent.slice(0, 5).map((l) => JSON.parse(l));
    await assertEveryReader(report, expected);
    const forwarded = Buffer.from(report.bytes, 'hex');
    assert.equal(forwarded.toString('utf8').split('\r\n').length, 2, 'the final CRLF is kept');
    assert.doesNotMatch(forwarded.toString('utf8'), /[\u0085\u2028\u2029]|\r(?!\n)/u);
    const answers = ran.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: number; result?: unknown });
    assert.deepEqual(
      answers.map((a) => a.id).sort((a, b) => a - b),
      [3, 5, 6, 7, 9, 10],
    );
    assert.match(JSON.stringify(answers.find((a) => a.id === 10)), /Write\(protected/);
  });

  it('--http: a body holding LF, CR or U+2028 goes on as one line of the same value', async () => {
    const project = makeProject('tally-mcp-cr-http-');
    await certify(project, ['--allow', 'mcp__fs__*', '--forbid', 'Write(protected/**)']);
    writeFileSync(join(project.dir, 'readers.py'), READERS_PY);
    const bodies: Buffer[] = [];
    const upstream = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        bodies.push(Buffer.concat(chunks));
        res.writeHead(202).end();
      });
    });
    upstream.listen(0, '127.0.0.1');
    await once(upstream, 'listening');
    const remote = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/mcp`;
    const gateway = await startHttpGateway(project, remote, 'fs');
    try {
      const sent = [
        CR_SMUGGLE,
        `{\n  "jsonrpc": "2.0",\r\n  "id": 5,\n  "method": "ping",\n  "params": {"s": "a\u2028b"}\n}\n`,
        stringSmuggle(6, '\u0085'),
      ];
      for (const body of sent) {
        const answer = await fetch(gateway.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
          body,
        });
        assert.equal(answer.status, 202);
      }
      assert.equal(bodies.length, 3);
      for (const [i, body] of bodies.entries()) {
        const read = spawnSync(
          python.bin,
          [join(project.dir, 'readers.py'), join(project.dir, `body-${i}.json`)],
          {
            input: body,
          },
        );
        assert.equal(read.status, 0, read.stderr.toString());
        const report = JSON.parse(readFileSync(join(project.dir, `body-${i}.json`), 'utf8')) as Report;
        await assertEveryReader(report, [JSON.parse(sent[i]!)]);
      }
    } finally {
      gateway.child.kill('SIGTERM');
      await once(gateway.child, 'exit');
      upstream.close();
    }
  });

  it('the Python MCP SDK server runs no call the gateway did not judge', {
    skip: !python.sdk && `${python.bin} has no mcp package (set TALLY_MCP_PYTHON)`,
  }, async () => {
    const project = makeProject('tally-mcp-cr-sdk-');
    await certify(project, ['--allow', 'mcp__fs__*', '--forbid', 'Write(protected/**)']);
    writeFileSync(join(project.root, 'server.py'), SDK_SERVER_PY);
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    };
    const sent = [
      JSON.stringify(init),
      '{"jsonrpc":"2.0","method":"notifications/initialized"}',
      CR_SMUGGLE,
      `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"notes.txt","content":"a\u2028b\\r\\nc"}}}`,
    ];
    // The SDK server drops requests still running when its input ends: each answer is awaited.
    const gateway = spawn(
      process.execPath,
      [TALLY_BIN, 'mcp', '--name', 'fs', '--agent', 'coder', '--', python.bin, 'server.py'],
      { cwd: project.root, env: project.env, stdio: ['pipe', 'pipe', 'pipe'] },
    );
    let stdout = '';
    let stderr = '';
    gateway.stdout.on('data', (d: Buffer) => {
      stdout += d.toString('utf8');
    });
    gateway.stderr.on('data', (d: Buffer) => {
      stderr += d.toString('utf8');
    });
    const exited = once(gateway, 'exit');
    /** Waits for an answer to one of `ids`: the smuggled call's (4), without the fix, comes instead of the ping's. */
    const answered = async (...ids: number[]) => {
      const has = () =>
        stdout.split('\n').some((l) => ids.some((id) => l.startsWith(`{"jsonrpc":"2.0","id":${id},`)));
      for (let i = 0; i < 600 && !has(); i++) await new Promise((r) => setTimeout(r, 50));
      assert.ok(has(), `no answer ${ids.join(' or ')}: ${stdout}\n${stderr}`);
    };
    try {
      gateway.stdin.write(`${sent.slice(0, 2).join('\n')}\n`);
      await answered(1);
      gateway.stdin.write(`${sent[2]}\n`);
      await answered(3, 4);
      gateway.stdin.write(`${sent[3]}\n`);
      await answered(5);
      gateway.stdin.end();
      const [code] = await exited;
      assert.equal(code, 0, stderr);
    } finally {
      if (gateway.exitCode === null) {
        gateway.kill('SIGTERM');
        await exited;
      }
    }
    const ids = stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { id: number }).id);
    assert.deepEqual(ids, [1, 3, 5], stdout);
    assert.equal(existsSync(join(project.root, 'protected')), false, 'the smuggled call never ran');
    assert.equal(readFileSync(join(project.root, 'notes.txt'), 'utf8'), 'a\u2028b\r\nc');
    const sealed = /sealed: (\S+\.tally)/.exec(stderr);
    assert.ok(sealed, stderr);
    const receipt = jsonOut(await project.tally(['receipt', 'show', sealed[1]!, '--json']));
    const written = (receipt.files_written as { path: string }[]).map((f) => f.path);
    assert.ok(written.includes('notes.txt'), JSON.stringify(receipt.files_written));
  });
});

describe('the Node SDK filesystem server through the gateway', () => {
  it('writes a content holding U+2028, U+2029 and NEL as the client sent it', async () => {
    const project = makeProject('tally-mcp-ls-');
    await certify(project, ['--allow', 'mcp__fs__*', '--forbid', 'Write(protected/**)']);
    mkdirSync(join(project.root, 'protected'));
    const content = 'one\u2028two\u2029three\u0085four\r\n';
    const env = project.env as Record<string, string>;
    const tapped = await connect(throughGateway('fs', [process.execPath, FS_SERVER, project.root]), {
      cwd: project.root,
      env,
    });
    try {
      const wrote = await tapped.client.callTool({
        name: 'write_file',
        arguments: { path: join(project.root, 'notes.txt'), content },
      });
      assert.notEqual(wrote.isError, true, resultText(wrote));
      assert.equal(readFileSync(join(project.root, 'notes.txt'), 'utf8'), content);
    } finally {
      await tapped.close();
    }
  });
});
