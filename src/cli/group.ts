/**
 * A command group: `tally <group> <subcommand> …` routed through one table. Every group (`session`,
 * `agent`, `ahp`, `recorder`, …) is built here, so each subcommand is a module of its own, loaded
 * only when it runs, and `--help` after a subcommand prints that subcommand's own usage.
 */
import { type Command, UsageError } from './command.js';

export type Subcommands = Record<string, () => Promise<{ command: Command }>>;

export function commandGroup(name: string, summary: string, subcommands: Subcommands): Command {
  const names = Object.keys(subcommands);
  const overview = async (): Promise<string> => {
    const lines = [`usage: tally ${name} <${names.join('|')}> [options]`, ''];
    for (const sub of names) {
      const { command } = await subcommands[sub]!();
      lines.push(`  ${sub.padEnd(13)} ${command.summary}`);
    }
    lines.push(
      '',
      `Run 'tally ${name} <subcommand> --help' for its options; every subcommand that reports a result takes --json.`,
    );
    return lines.join('\n');
  };
  const group: Command = {
    summary,
    usage: `usage: tally ${name} <${names.join('|')}> [options]`,
    async usageFor(argv) {
      const load = argv[0] === undefined ? undefined : subcommands[argv[0]];
      if (!load) return overview();
      const { command } = await load();
      return command.usageFor ? command.usageFor(argv.slice(1)) : command.usage;
    },
    async run(argv, ctx) {
      const [sub, ...rest] = argv;
      const load = sub === undefined ? undefined : subcommands[sub];
      if (!load) {
        throw new UsageError(
          sub === undefined
            ? `missing subcommand (${names.join(', ')})`
            : `unknown subcommand '${sub}' (expected one of: ${names.join(', ')})`,
        );
      }
      const { command } = await load();
      return command.run(rest, ctx);
    },
  };
  return group;
}
