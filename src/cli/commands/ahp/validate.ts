/**
 * `tally ahp validate FILE [--admit] [--json]`: checks an AHP portable registration document, and
 * with --admit whether this harness can honour it here (./admission in src/ahp).
 * Exit 0 valid (warnings allowed), 1 invalid or refused (every issue listed), 2 unreadable or not
 * JSON.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { admitRegistration } from '../../../ahp/registration/admission.js';
import { parseRegistrationText, RegistrationError } from '../../../ahp/registration/registration.js';
import type { Issue, Registration } from '../../../ahp/registration/types.js';
import { type Command, type CommandContext, parseFlags, printJson, UsageError } from '../../command.js';

interface Report {
  valid: boolean;
  issues: Issue[];
  warnings: Issue[];
}

const USAGE = [
  'usage: tally ahp validate FILE [--admit] [--json]',
  '',
  'Checks an AHP portable registration document (FILE, or - for stdin) against every rule.',
  '',
  '  --admit  also check that Tally can honour it here: credentials named by tokenEnv are set,',
  '           no scope or event this installation cannot enforce (see docs/ahp-registration.md)',
  '  --json   print {valid, issues, warnings} on stdout; each issue has pointer, rule, message',
  '',
  'exit 0 valid (warnings allowed), 1 invalid or not admitted, 2 unreadable or not JSON',
].join('\n');

export const command: Command = {
  summary: 'check an AHP portable registration document',
  usage: USAGE,
  async run(argv, ctx) {
    const { values, positionals } = parseFlags(argv, {
      json: { type: 'boolean' },
      admit: { type: 'boolean' },
    });
    if (positionals.length !== 1) {
      throw new UsageError(positionals.length === 0 ? 'missing FILE' : 'expected exactly one FILE');
    }
    const file = positionals[0] as string;
    const json = values.json === true;

    let bytes: Uint8Array;
    try {
      bytes = file === '-' ? await ctx.stdin() : await readFile(resolve(ctx.cwd, file));
    } catch (error) {
      const message = `cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`;
      return finish(
        ctx,
        json,
        file,
        { valid: false, issues: [{ pointer: '', rule: 'document.read', message }], warnings: [] },
        2,
      );
    }

    try {
      const { registration, warnings } = parseRegistrationText(bytes);
      if (values.admit === true) {
        const admission = admitRegistration(registration, { env: ctx.env });
        if (!admission.accepted) {
          return finish(ctx, json, file, { valid: false, issues: admission.issues, warnings }, 1);
        }
      }
      return finish(ctx, json, file, { valid: true, issues: [], warnings }, 0, registration);
    } catch (error) {
      if (!(error instanceof RegistrationError)) throw error;
      const report = { valid: false, issues: error.issues, warnings: error.warnings };
      return finish(ctx, json, file, report, error.code === 'syntax' ? 2 : 1);
    }
  },
};

function finish(
  ctx: CommandContext,
  json: boolean,
  file: string,
  report: Report,
  exit: number,
  registration?: Registration,
): number {
  if (json) {
    printJson(ctx, report);
    return exit;
  }
  const lines: string[] = [];
  if (report.valid && registration) {
    const subs = registration.hooks.reduce((n, b) => n + b.subscriptions.length, 0);
    lines.push(
      `${file}: valid (${plural(registration.hooks.length, 'backend')}, ${plural(subs, 'subscription')})`,
    );
  } else if (exit === 2) {
    lines.push(`${file}: ${report.issues[0]?.message ?? 'unreadable'}`);
  } else {
    lines.push(`${file}: invalid, ${plural(report.issues.length, 'problem')}`);
    for (const issue of report.issues)
      lines.push(`  error   ${issue.pointer || '/'}  ${issue.message}  [${issue.rule}]`);
  }
  for (const w of report.warnings) lines.push(`  warning ${w.pointer || '/'}  ${w.message}  [${w.rule}]`);
  ctx.stderr(`${lines.join('\n')}\n`);
  return exit;
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
