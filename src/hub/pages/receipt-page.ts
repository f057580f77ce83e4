/**
 * The receipt page: what the session did, as its signed receipt says (headline, window, agent
 * graph, files with operation and source labels, processes, network, tool calls, policy
 * decisions and who decided, timeline), and a verification panel the browser fills in by
 * verifying the package itself (./verifier/panel.ts). The same markup is served by the hub at
 * `/receipt/<id>` and written as one offline file by `tally receipt render`.
 */
import { receiptSince, sinceSentence } from '../../evidence/receipt/since.js';
import { unauthorizedBadge } from './agent-page.js';
import { type Html, html, jsonScript } from './html.js';
import { page } from './layout.js';
import type { PackageView } from './package-view.js';
import { arr, counts, type Json, num, obj, str, strs } from './read.js';

/** What the panel's script needs: where the bytes are (hub) or the bytes (offline), and the keys. */
export type VerifyData =
  | {
      mode: 'hub';
      raw: string;
      /** The key the hub registered for the uploading ship (base64 raw). */
      ship_key: string;
      ship_id: string;
      log_index: number;
      verifier_key: string;
      checkpoint: string;
      proof: string;
      /** The session's witnessed chain heads. */
      heads: string;
    }
  | { mode: 'offline'; package: string };

export interface ReceiptPageInput {
  view: PackageView;
  data: VerifyData;
  /** Facts the hub knows about the upload (absent offline). */
  hub?: {
    ship_id: string;
    agent: string | null;
    digest: string;
    log_index: number;
    received_at: string;
    /** The checks the hub ran on arrival (for the certificate's policy facts). */
    checks: Json;
  };
  scriptSrc?: string;
  inlineScript?: string;
}

const pills = (values: string[], kind = '') =>
  values.map((v) => html`<span class="pill ${kind}">${v}</span>`);

function table(caption: string, head: string[], rows: Html[][]): Html {
  if (rows.length === 0) return html`<p class="muted">None.</p>`;
  return html`<div class="table" tabindex="0" role="region" aria-label="${caption}"><table><caption class="muted">${caption}</caption><thead><tr>${head.map((h) => html`<th scope="col">${h}</th>`)}</tr></thead><tbody>${rows.map((r) => html`<tr>${r.map((c) => html`<td>${c}</td>`)}</tr>`)}</tbody></table></div>`;
}

const text = (v: Json) => html`${str(v) ?? ''}`;
const mono = (v: Json) => html`<span class="mono">${str(v) ?? ''}</span>`;

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** The rows a list left out past the receipt's size bound (docs/receipt.md#bounds), when any. */
function omittedRows(value: Json | undefined, one: string, many: string): Html | null {
  const count = num(obj(value).count);
  if (!count) return null;
  return html`<p class="badge bad">${plural(count, `more ${one}`, `more ${many}`)} past the receipt's size bound: in the package's signed records, not shown here.</p>`;
}

function headline(receipt: Record<string, Json>): string {
  const c = obj(receipt.counts);
  const roots = strs(obj(receipt.agent_graph).roots);
  const who = roots.length > 0 ? roots.join(', ') : 'The session';
  return `${who}: ${plural(num(c.files_written) ?? 0, 'file')} written, ${num(c.files_read) ?? 0} read, ${plural(num(c.processes) ?? 0, 'process', 'processes')}, ${plural(num(c.tool_calls) ?? 0, 'tool call')}`;
}

function duration(start: string | undefined, end: string | undefined): string {
  if (start === undefined || end === undefined) return '';
  const ms = Date.parse(end) - Date.parse(start);
  if (!Number.isFinite(ms) || ms < 0) return '';
  if (ms < 1000) return `${ms} ms`;
  const s = Math.round(ms / 1000);
  return s < 120 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

function agentGraph(graph: Record<string, Json>): Html {
  const agents = arr(graph.agents).map(obj);
  const byId = new Map(agents.map((a) => [str(a.id) ?? '', a]));
  const seen = new Set<string>();
  const node = (id: string, depth: number): Html => {
    const a = byId.get(id);
    if (a === undefined || seen.has(id) || depth > 32) return html``;
    seen.add(id);
    const models = arr(a.models).map(obj);
    return html`<li class="agent"><strong>${str(a.name) ?? id}</strong>${str(a.instance) ? html` <span class="muted mono">${str(a.instance)}</span>` : null}
      ${models.map((m) => html`<span class="pill">model ${str(m.model) ?? '?'}</span>${str(m.provider) ? html`<span class="pill provider">provider ${str(m.provider)}</span>` : null}`)}
      <span class="muted">${plural(num(a.event_count) ?? 0, 'event')}, ${plural(num(a.tool_calls) ?? 0, 'tool call')}</span>
      ${strs(a.children).length > 0 ? html`<ul>${strs(a.children).map((c) => node(c, depth + 1))}</ul>` : null}</li>`;
  };
  const roots = strs(graph.roots);
  const rest = agents.map((a) => str(a.id) ?? '').filter((id) => !roots.includes(id));
  const unattributed = num(graph.unattributed_events) ?? 0;
  return html`<ul class="agents">${roots.map((r) => node(r, 0))}${rest.map((r) => node(r, 0))}</ul>
    ${unattributed > 0 ? html`<p class="muted">${plural(unattributed, 'event')} not attributed to an agent (reconciliation, the CLI).</p>` : null}`;
}

/** What changed after the previous session closed and before this one started: not this session's rows. */
function sinceFacts(value: Json | undefined): Html | null {
  const since = receiptSince(value);
  if (since === undefined) return null;
  const changed = since.changed ?? [];
  return html`<dt>Before this session</dt><dd>${sinceSentence(since)}${changed.length > 0 ? html`<ul>${changed.map((c) => html`<li>${text(c.operation)} ${mono(c.path)}${c.from ? html` <span class="muted">from <span class="mono">${c.from}</span></span>` : null}</li>`)}</ul>` : null}</dd>`;
}

function filesWritten(rows: Json[]): Html {
  return table(
    'Files written: operation, and every channel that witnessed the change',
    ['Path', 'Operation', 'Witnessed by', 'Agents', 'Caused by the agent'],
    rows
      .map(obj)
      .map((f) => [
        html`${mono(f.path)}${str(f.from) ? html` <span class="muted">from <span class="mono">${str(f.from)}</span></span>` : null}${f.outside_repo === true ? html` <span class="pill">outside the repository</span>` : null}`,
        text(f.operation),
        html`${pills(strs(f.sources), 'source')}`,
        html`${strs(f.agents).join(', ')}`,
        html`${f.agent_caused === true ? 'yes' : f.agent_caused === false ? 'no' : 'not said'}`,
      ]),
  );
}

function filesRead(rows: Json[]): Html {
  return table(
    'Files read',
    ['Path', 'Witnessed by', 'Agents'],
    rows
      .map(obj)
      .map((f) => [
        mono(f.path),
        html`${pills(strs(f.sources), 'source')}`,
        html`${strs(f.agents).join(', ')}`,
      ]),
  );
}

function processes(rows: Json[]): Html {
  return table(
    'Processes',
    ['Command', 'Tool', 'Outcome', 'Exit', 'Duration', 'Witnessed by'],
    rows
      .map(obj)
      .map((p) => [
        mono(p.command),
        text(p.tool),
        text(p.outcome),
        html`${num(p.exit_code) ?? ''}`,
        html`${num(p.duration_ms) === undefined ? '' : `${num(p.duration_ms)} ms`}`,
        html`${pills(strs(p.sources), 'source')}`,
      ]),
  );
}

function network(rows: Json[]): Html {
  return table(
    'Network destinations',
    ['Destination', 'Witnessed by', 'Agents'],
    rows
      .map(obj)
      .map((n) => [
        mono(str(n.url) ?? `${str(n.host) ?? ''}${num(n.port) === undefined ? '' : `:${num(n.port)}`}`),
        html`${pills(strs(n.sources), 'source')}`,
        html`${strs(n.agents).join(', ')}`,
      ]),
  );
}

function verdictPills(value: Json): Html {
  return html`${counts(value)
    .filter(([, n]) => n > 0)
    .map(([k, n]) => html`<span class="pill ${k}">${k} ${n}</span>`)}`;
}

function toolCalls(rows: Json[]): Html {
  return table(
    'Tool calls by tool',
    ['Tool', 'Calls', 'Kinds', 'Outcomes', 'Decisions', 'Witnessed by'],
    rows.map(obj).map((t) => [
      text(t.tool),
      html`${num(t.count) ?? 0}${(num(t.not_run) ?? 0) > 0 ? html` <span class="muted">(${num(t.not_run)} not run)</span>` : null}`,
      html`${strs(t.kinds).join(', ')}`,
      html`${counts(t.outcomes)
        .map(([k, n]) => `${k} ${n}`)
        .join(', ')}`,
      verdictPills(t.decisions),
      html`${pills(strs(t.sources), 'source')}`,
    ]),
  );
}

function decisions(rows: Json[]): Html {
  return table(
    'Policy decisions and who decided',
    ['Record', 'Decision', 'Decided by', 'Tool', 'Reason', 'Backends'],
    rows.map(obj).map((d) => [
      html`${num(d.seq) ?? ''}`,
      html`<span class="pill ${str(d.decision) ?? ''}">${str(d.decision) ?? ''}</span>`,
      html`${mono(d.by)}${str(d.rule) ? html` <span class="muted">rule ${str(d.rule)}</span>` : null}`,
      text(d.tool),
      text(d.reason),
      html`${arr(d.answers)
        .map(obj)
        .map((a) => html`<span class="pill">${str(a.backend) ?? ''}: ${str(a.decision) ?? ''}</span>`)}`,
    ]),
  );
}

function timeline(rows: Json[], omitted: Json): Html {
  const n = num(obj(omitted).count);
  return html`<ol class="timeline">${rows
    .map(obj)
    .map(
      (e) =>
        html`<li><span class="mono">#${num(e.seq) ?? ''}</span> <time class="muted">${str(e.time) ?? ''}</time> <span class="pill source">${str(e.source) ?? ''}</span> ${str(e.agent) ? html`<strong>${str(e.agent)}</strong> ` : null}<span class="mono">${str(e.type) ?? ''}</span> ${str(e.summary) ?? ''}</li>`,
    )}</ol>${n ? html`<p class="muted">${plural(n, 'more event')} not listed (see the package).</p>` : null}`;
}

function panel(data: VerifyData, signers: PackageView['keys']): Html {
  return html`<section id="verify" class="panel" aria-labelledby="verify-title" data-verdict="pending">
<h2 id="verify-title">Verification</h2>
<p id="verify-status" role="status" aria-live="polite">Verifying this package in your browser…</p>
<noscript><p>This check runs in the browser: enable JavaScript to verify the package here, or run <code>tally verify</code>.</p></noscript>
<p class="muted">The package names its signer key ${signers.map((k, i) => html`${i > 0 ? ', ' : ''}<span class="mono">${k.id}</span>`)}.</p>
<ul class="checks" id="verify-checks"></ul>
${html`<div class="pin"><label for="pin-key">Pin the signer's key id</label><input id="pin-key" type="text" autocomplete="off" spellcheck="false" placeholder="key_…"><button type="button" id="pin-apply">Verify with this key</button></div>
<div class="drop" id="pin-drop"><label for="pin-file">Or drop or choose a public key file (.pub)</label> <input id="pin-file" type="file"></div>`}
<script type="application/json" id="tally-verify-data">${jsonScript(data)}</script>
</section>`;
}

export function receiptBody(input: ReceiptPageInput): Html {
  const r = obj(input.view.receipt);
  const s = obj(r.session);
  const harness = obj(s.harness);
  const start = str(s.start);
  const end = str(s.end);
  const hub = input.hub;
  return html`<h1>Receipt <span class="mono">${str(s.id) ?? input.view.session ?? ''}</span></h1>
${input.view.problem ? html`<p class="badge bad">${input.view.problem}.</p>` : html`<p class="lead">${headline(r)}.</p>`}
<dl class="facts">
<dt>Session window</dt><dd><time>${start ?? '?'}</time> → <time>${end ?? '?'}</time> ${duration(start, end) ? html`<span class="muted">(${duration(start, end)})</span>` : null}</dd>
<dt>Status</dt><dd>${str(s.status) ?? 'no end recorded'}${str(s.end_reason) ? ` (${str(s.end_reason)})` : ''}</dd>
${str(harness.name) ? html`<dt>Harness</dt><dd>${str(harness.name)} ${str(harness.version) ?? ''}</dd>` : null}
${str(obj(s.certificate).agent) ? html`<dt>Certificate</dt><dd>${str(obj(s.certificate).agent)} <span class="mono">${str(obj(s.certificate).serial) ?? ''}</span></dd>` : null}
${sinceFacts(s.since)}
<dt>Records</dt><dd>${num(r.record_count) ?? '?'}</dd>
<dt>Merkle root</dt><dd class="mono">${str(r.merkle_root) ?? '?'}</dd>
${hub ? html`<dt>Ship</dt><dd class="mono">${hub.ship_id}</dd><dt>Agent</dt><dd>${hub.agent ? html`<a href="/agent/${encodeURIComponent(hub.agent)}">${hub.agent}</a>` : 'not indexed under an agent'}</dd><dt>Package digest</dt><dd class="mono">${hub.digest}</dd><dt>Log entry</dt><dd>${hub.log_index} <span class="muted">received ${hub.received_at}</span></dd><dt>Policy</dt><dd>${unauthorizedBadge(hub.checks)} <span class="muted">(checked by the hub on arrival against the certificate)</span></dd>` : null}
</dl>
${panel(input.data, input.view.keys)}${
  Array.isArray(r.sections_omitted)
    ? html`<p class="badge bad">Left out, whole, past the receipt's size bound (in the package's signed records): ${arr(
        r.sections_omitted,
      )
        .map((s) => str(s) ?? '')
        .join(', ')}</p>`
    : null
}
<h2>Agents</h2>${agentGraph(obj(r.agent_graph))}
<h2>Files written</h2>${filesWritten(arr(r.files_written))}${omittedRows(r.files_written_omitted, 'file written', 'files written')}
<h2>Files read</h2>${filesRead(arr(r.files_read))}${omittedRows(r.files_read_omitted, 'file read', 'files read')}
<h2>Processes</h2>${processes(arr(r.processes))}${num(obj(r.processes_omitted).count) ? html`<p class="muted">${plural(num(obj(r.processes_omitted).count)!, 'more process', 'more processes')} summarised in the package.</p>` : null}
<h2>Network</h2>${network(arr(r.network))}${omittedRows(r.network_omitted, 'destination', 'destinations')}
<h2>Tool calls</h2>${toolCalls(arr(r.tool_calls))}${omittedRows(r.tool_calls_omitted, 'tool', 'tools')}
<h2>Policy decisions</h2>${decisions(arr(r.decisions))}${num(obj(r.decisions_omitted).count) ? html`<p class="muted">${plural(num(obj(r.decisions_omitted).count)!, 'more decision')} summarised in the package.</p>` : null}
<h2>Timeline</h2>${timeline(arr(r.timeline), r.timeline_omitted)}`;
}

export function receiptPage(input: ReceiptPageInput): string {
  const s = obj(obj(input.view.receipt).session);
  return page({
    title: `Receipt ${str(s.id) ?? input.view.session ?? ''} · Tally`,
    body: receiptBody(input),
    search: input.inlineScript === undefined,
    ...(input.scriptSrc !== undefined ? { scriptSrc: input.scriptSrc } : {}),
    ...(input.inlineScript !== undefined ? { inlineScript: input.inlineScript } : {}),
  });
}
