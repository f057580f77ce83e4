#!/usr/bin/env node
// `tally hook …` is on the hot path of every hook an agent runs: it loads the shim alone, not the CLI.
const argv = process.argv.slice(2);
if (argv[0] === 'hook' && !argv.includes('--help') && !argv.includes('-h')) {
  const { runHookShim } = await import('../dist/src/cli/hook-shim.js');
  const stdin = async () => {
    const chunks = [];
    for await (const chunk of process.stdin) chunks.push(chunk);
    return Buffer.concat(chunks);
  };
  process.exitCode = await runHookShim(argv.slice(1), {
    stdin,
    stdout: (t) => process.stdout.write(t),
    stderr: (t) => process.stderr.write(t),
    env: process.env,
  });
} else {
  const { main } = await import('../dist/src/cli/main.js');
  process.exitCode = await main(argv);
}
