/** Reading a package's header, seal and receipt without verifying them, and a readable summary. */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseJson } from '../core/canonical.js';
import { asEnvelope, decodeBase64 } from '../core/dsse.js';
import { readLogLines } from '../evidence/log/reader.js';
import {
  formatOf,
  type PackageHeader,
  type PackageSeal,
  parseHeader,
  parseSeal,
} from '../evidence/package/grammar.js';
import type { Receipt } from '../evidence/receipt/receipt.js';
import { sinceSentence } from '../evidence/receipt/since.js';
import { type CommandContext, UsageError } from './command.js';
import { placesOf } from './session-context.js';

export interface InspectedPackage {
  path: string;
  header: PackageHeader;
  seal: PackageSeal;
  receipt: Receipt;
}

/** The package named, or the newest one in this project's packages/ folder. */
export function packageArgument(ctx: CommandContext, given: string | undefined): string {
  if (given) {
    const path = resolve(ctx.cwd, given);
    if (!existsSync(path)) throw new UsageError(`no such package: ${path}`);
    return path;
  }
  const dir = join(placesOf(ctx).state, 'packages');
  const files = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.tally')) : [];
  if (files.length === 0) throw new UsageError(`no package given and none in ${dir}`);
  return files.map((f) => join(dir, f)).sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0]!;
}

/** Reads header, seal and receipt without verifying anything (say so to the user). */
export async function inspectPackage(path: string): Promise<InspectedPackage> {
  let header: PackageHeader | null = null;
  let last: Buffer | null = null;
  for await (const { line } of readLogLines(path)) {
    if (header === null) header = parseHeader(line);
    last = line;
  }
  if (!header || !last) throw new UsageError(`${path} is empty`);
  const seal = parseSeal(last, formatOf(header));
  let receipt: Receipt;
  try {
    const payload = decodeBase64(asEnvelope(seal.receipt).payload, 'seal/receipt/payload');
    receipt = parseJson(payload.toString('utf8')) as Receipt;
    if (typeof receipt !== 'object' || receipt === null || Array.isArray(receipt))
      throw new Error('the receipt is not a JSON object');
    // Read without verification: check the shape the summary relies on before trusting it.
    const r = receipt as unknown as Record<string, unknown>;
    if (typeof r.session !== 'object' || r.session === null) throw new Error('/session is missing');
    if (!Array.isArray((r.agent_graph as { agents?: unknown } | undefined)?.agents))
      throw new Error('/agent_graph/agents is missing');
    for (const section of ['files_written', 'files_read', 'processes', 'network', 'tool_calls', 'decisions'])
      if (!Array.isArray(r[section])) throw new Error(`/${section} is missing`);
  } catch (error) {
    throw new UsageError(`${path}: the seal's receipt cannot be read (${(error as Error).message})`);
  }
  return { path, header, seal, receipt };
}

export function summary(p: InspectedPackage): string {
  const r = p.receipt;
  const lines = [
    `session ${r.session.id}  ${r.session.start} → ${r.session.end}${r.session.status ? `  (${r.session.status})` : ''}`,
    `  records ${r.record_count}   merkle root ${r.merkle_root}`,
    `  agents  ${r.agent_graph.agents.map((a) => `${a.name}${a.models.length ? ` [${a.models.map((m) => m.model).join(', ')}]` : ''}`).join(', ') || '(none recorded)'}`,
  ];
  const since = r.session.since;
  if (since !== undefined) {
    lines.push(`  since   ${sinceSentence(since)}`);
    for (const c of (since.changed ?? []).slice(0, 20))
      lines.push(
        `    ${c.operation.padEnd(8)} ${c.path}${c.from ? ` (from ${c.from})` : ''}  [between sessions]`,
      );
    if ((since.count ?? 0) > 20) lines.push(`    … ${(since.count ?? 0) - 20} more (--json for all)`);
  }
  const section = (title: string, rows: string[], omitted = 0) => {
    lines.push(`  ${title} (${rows.length + omitted})`);
    for (const row of rows.slice(0, 20)) lines.push(`    ${row}`);
    if (rows.length > 20) lines.push(`    … ${rows.length - 20} more (--json for all)`);
    if (omitted > 0)
      lines.push(
        `    … ${omitted} more past the receipt's size bound: in the package's signed records, not in its receipt (receipt_complete fails)`,
      );
  };
  section(
    'files written',
    r.files_written.map((f) => `${f.operation.padEnd(8)} ${f.path}  [${f.sources.join(', ')}]`),
    r.files_written_omitted?.count,
  );
  section(
    'files read',
    r.files_read.map((f) => `${f.path}  [${f.sources.join(', ')}]`),
    r.files_read_omitted?.count,
  );
  section(
    'processes',
    r.processes.map(
      (p) =>
        `${p.command}${p.exit_code !== undefined ? `  → exit ${p.exit_code}` : ''}  [${p.sources.join(', ')}]`,
    ),
  );
  section(
    'network',
    r.network.map((n) => `${n.url ?? n.host ?? '?'}  [${n.sources.join(', ')}]`),
    r.network_omitted?.count,
  );
  section(
    'tool calls',
    r.tool_calls.map(
      (t) =>
        `${t.tool.padEnd(16)} ×${t.count}  allow ${t.decisions.allow ?? 0} / deny ${t.decisions.deny ?? 0} / ask ${t.decisions.ask ?? 0}`,
    ),
    r.tool_calls_omitted?.count,
  );
  section(
    'decisions',
    r.decisions.map(
      (d) =>
        `#${d.seq} ${d.decision.padEnd(5)} ${d.tool ?? d.event_type} by ${d.by}${d.rule ? ` (${d.rule})` : ''}`,
    ),
  );
  if (r.sections_omitted !== undefined)
    lines.push(
      `  left out, whole, past the receipt's size bound (in the package's signed records): ${r.sections_omitted.join(', ')}`,
    );
  lines.push('  (read without verification — run `tally verify` to check it)');
  return `${lines.join('\n')}\n`;
}
