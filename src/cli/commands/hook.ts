/** `tally hook <agent>`: the command-hook shim (src/cli/hook-shim.ts), here for `--help` and `tally --help`. */

import type { Command } from '../command.js';
import { runHookShim } from '../hook-shim.js';

export const command: Command = {
  summary: "native hook shim: the agent's hook payload → the recorder → its native answer",
  usage: [
    'usage: tally hook claude-code|gemini-cli|qwen-code|codex|opencode|cursor [--fail closed|open]',
    '                 [--agent NAME] [--event-id ID]   (the payload on stdin)',
    '',
    'Hands the hook payload to this user’s recorder and prints its answer. The event that begins a',
    'session (SessionStart, OpenCode’s session.created, Cursor’s beforeSubmitPrompt) starts the recorder',
    'when it is down. When the recorder cannot be reached the payload is spooled (recorded when the',
    'recorder next starts) and the agent is answered by --fail: closed (default) denies a tool call and',
    'blocks a prompt, open lets it through.',
    '--agent names the agent whose certificate a session opened for this harness session runs under.',
    '--event-id is the id the sh shim already sent the payload under (a retry is recorded once).',
    'Written by `tally install` and `tally run`.',
  ].join('\n'),
  run: (argv, ctx) =>
    runHookShim(argv, { stdin: ctx.stdin, stdout: ctx.stdout, stderr: ctx.stderr, env: ctx.env }),
};
