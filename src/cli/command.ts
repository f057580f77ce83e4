/**
 * The shape every CLI command module has, and the errors that map to exit codes.
 * Exit codes: 0 ok, 1 verification or policy failure, 2 usage or input error.
 */
import { type ParseArgsConfig, parseArgs } from 'node:util';

export interface CommandContext {
  /** Machine output: with --json only JSON goes here. */
  stdout: (text: string) => void;
  /** Human text, warnings and progress. */
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
  cwd: string;
  stdin: () => Promise<Buffer>;
  isTTY: boolean;
  /** Runs another `tally` command line in this process (the demo's steps); set by main. */
  invoke?: (argv: string[], ctx: CommandContext) => Promise<number>;
}

export interface Command {
  /** One line shown in `tally --help`. */
  summary: string;
  /** Full usage text shown by `tally <command> --help`. */
  usage: string;
  /**
   * The usage text for `tally <command> ARGV… --help` when it depends on the arguments (a
   * command group answering with its subcommand's usage); `usage` otherwise.
   */
  usageFor?(argv: string[]): Promise<string>;
  run(argv: string[], ctx: CommandContext): Promise<number>;
}

/** Bad flags, missing arguments, unreadable input: exit 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** A check or policy said no: exit 1. */
export class FailureError extends Error {
  override name = 'FailureError';
}

type Options = NonNullable<ParseArgsConfig['options']>;

/** parseArgs with strict checking, turning its errors into UsageError. */
export function parseFlags<O extends Options>(
  argv: string[],
  options: O,
): ReturnType<typeof parseArgs<{ args: string[]; options: O; allowPositionals: true; strict: true }>> {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

export function printJson(ctx: CommandContext, value: unknown): void {
  ctx.stdout(`${JSON.stringify(value, null, 2)}\n`);
}

/** Colour only for humans on a TTY, never under NO_COLOR or CI. */
export function useColour(ctx: CommandContext): boolean {
  return ctx.isTTY && !ctx.env.NO_COLOR && !ctx.env.CI;
}
