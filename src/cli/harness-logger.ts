/** How the CLI relays the harness's diagnostics: one line on stderr naming the backend. */
import type { Logger } from '../ahp/transports/options.js';
import { redactText } from '../evidence/redact.js';
import type { CommandContext } from './command.js';

export function harnessLogger(ctx: CommandContext): Logger {
  return (level, message, fields) => {
    if (level === 'debug') return;
    const from = typeof fields?.backend === 'string' ? ` [${fields.backend}]` : '';
    // A backend's stderr is its own text: it is redacted before it reaches a terminal or a log.
    const line = typeof fields?.line === 'string' ? `: ${redactText(fields.line)}` : '';
    ctx.stderr(`${level}${from}: ${message}${line}\n`);
  };
}
