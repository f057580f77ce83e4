/**
 * The agent page: the identity card of the agent's newest certificate (who it acts for, with
 * which key, what it may, must not and may only with approval do, for how long) and its recent
 * receipts, each with "✓ no unauthorized calls" or the count of violations from the checks the
 * hub ran when the package arrived.
 */
import { type Html, html } from './html.js';
import { page } from './layout.js';
import { arr, type Json, num, obj, str, strs } from './read.js';

export interface AgentPageInput {
  slug: string;
  owner: string;
  /** The ship's registered key id: the fingerprint the certificates must be signed by. */
  shipKeyId: string | null;
  /** The newest certificate's payload (as stored; verified when it was published). */
  certificate: Json | null;
  certificates: { serial: string; valid_from: string; valid_until: string }[];
  receipts: { session: string; started_at: string | null; record_count: number; checks: Json }[];
  now: Date;
}

/** What the stored checks say about unauthorized calls. */
export function unauthorizedBadge(checks: Json): Html {
  const check = arr(checks)
    .map(obj)
    .find((c) => c.check === 'unauthorized_calls');
  if (check === undefined) return html`<span class="badge muted">not checked against a certificate</span>`;
  if (check.ok === true) return html`<span class="badge good">✓ no unauthorized calls</span>`;
  const detail = obj(check.detail);
  const n = num(detail.executed) ?? num(detail.count) ?? 0;
  return html`<span class="badge bad">✗ ${n} unauthorized ${n === 1 ? 'call' : 'calls'}</span>`;
}

function actions(title: string, list: string[], empty: string): Html {
  return html`<h3>${title}</h3>${list.length === 0 ? html`<p class="muted">${empty}</p>` : html`<ul>${list.map((a) => html`<li><code>${a}</code></li>`)}</ul>`}`;
}

function validity(from: string | undefined, until: string | undefined, now: Date): Html {
  const start = from === undefined ? Number.NaN : Date.parse(from);
  const end = until === undefined ? Number.NaN : Date.parse(until);
  const state =
    Number.isFinite(end) && now.getTime() > end
      ? html` <span class="expired">expired</span>`
      : Number.isFinite(start) && now.getTime() < start
        ? html` <span class="expired">not yet valid</span>`
        : html` <span class="badge good">valid now</span>`;
  return html`<time>${from ?? '?'}</time> → <time>${until ?? '?'}</time>${state}`;
}

export function agentPage(input: AgentPageInput): string {
  const c = obj(input.certificate);
  const agent = obj(c.agent);
  const issuer = obj(c.issuer);
  const card =
    input.certificate === null
      ? html`<p class="muted">No certificate has been published for this agent.</p>`
      : html`<dl class="facts">
<dt>Name</dt><dd>${str(agent.name) ?? input.slug}</dd>
<dt>Acts for ship</dt><dd class="mono">${str(c.ship_id) ?? input.owner}</dd>
<dt>Key fingerprint</dt><dd class="mono">${str(issuer.key_id) ?? input.shipKeyId ?? '?'}</dd>
<dt>Issuer</dt><dd class="mono">${str(issuer.key_id) ?? '?'} <span class="muted">(the ship key${input.shipKeyId !== null && str(issuer.key_id) === input.shipKeyId ? ', as registered on this hub' : ''})</span></dd>
<dt>Valid</dt><dd>${validity(str(c.valid_from), str(c.valid_until), input.now)}</dd>
<dt>Model</dt><dd>${str(agent.model) ? html`<span class="pill">model ${str(agent.model)}</span>` : 'any'} ${str(agent.provider) ? html`<span class="pill provider">provider ${str(agent.provider)}</span>` : null}</dd>
<dt>Certificate</dt><dd class="mono">${str(c.serial) ?? ''}</dd>
</dl>
${actions('Allowed actions', strs(c.bounded_actions), 'None.')}
${actions('Forbidden actions', strs(c.forbidden), 'None.')}
${actions('Actions that need escalation (approval)', strs(c.escalation_required), 'None.')}`;
  const receipts =
    input.receipts.length === 0
      ? html`<p class="muted">No receipts yet.</p>`
      : html`<ul class="receipts">${input.receipts.map(
          (r) =>
            html`<li><a href="/receipt/${encodeURIComponent(r.session)}" class="mono">${r.session}</a> <span class="muted">${r.started_at ?? ''} · ${r.record_count} records</span> ${unauthorizedBadge(r.checks)}</li>`,
        )}</ul>`;
  const older = input.certificates.slice(1);
  return page({
    title: `Agent ${input.slug} · Tally`,
    search: true,
    body: html`<h1>Agent ${input.slug}</h1>
<p class="muted">Published by ship <span class="mono">${input.owner}</span>; the slug belongs to the ship that first published it.</p>
<section aria-labelledby="card-title"><h2 id="card-title">Identity card</h2>${card}</section>
<section aria-labelledby="receipts-title"><h2 id="receipts-title">Recent receipts</h2>${receipts}</section>
${older.length > 0 ? html`<section aria-labelledby="older-title"><h2 id="older-title">Earlier certificates</h2><ul>${older.map((o) => html`<li class="mono">${o.serial} <span class="muted">${o.valid_from} → ${o.valid_until}${Date.parse(o.valid_until) < input.now.getTime() ? ' (expired)' : ''}</span></li>`)}</ul></section>` : null}`,
  });
}
