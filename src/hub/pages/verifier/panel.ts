/// <reference lib="dom" />
/**
 * The verification panel of a receipt page: reads what the page embeds (#tally-verify-data),
 * verifies the package in this browser and says green or red, naming the failing check. On a hub
 * page the bytes come from the hub's raw endpoint, checked under the key the hub registered for the
 * ship, the log inclusion is proven against a checkpoint signed by the hub key, and the package must
 * extend every chain head the hub witnessed; offline, under the key the file names. Either way the
 * source also served the key (and the script), so the result is only "self-consistent" until the
 * viewer pins the signer's key: then "verified".
 * Everything is written with textContent: package content never becomes markup.
 */
import { Buffer } from 'buffer';
import { type WitnessCheck, witnessUnchecked } from '../../../hub-client/witness-check.js';
import type { VerifyData } from '../receipt-page.js';
import {
  headerKeys,
  type InclusionResult,
  inclusionInBrowser,
  verifyInBrowser,
  witnessInBrowser,
} from './check.js';

type Data = VerifyData;

interface Shown {
  check: string;
  ok: boolean;
  code: string;
  detail: unknown;
}

/** The verifier's clock, with the same allowance the hub gives an uploader's clock. */
const now = () => new Date(Date.now() + 300_000);

function element<T extends HTMLElement>(id: string): T | null {
  return document.getElementById(id) as T | null;
}

function message(detail: unknown): string {
  if (typeof detail === 'string') return detail;
  const m = (detail as { message?: unknown } | null)?.message;
  return typeof m === 'string' ? m : '';
}

function show(verdict: 'verified' | 'self-consistent' | 'failed', status: string, checks: Shown[]): void {
  const panel = element('verify');
  const statusLine = element('verify-status');
  const list = element('verify-checks');
  if (!panel || !statusLine || !list) return;
  const failed = checks.find((c) => !c.ok && c.code !== 'skipped');
  panel.dataset.verdict = verdict;
  if (failed) panel.dataset.failedCheck = failed.check;
  else delete panel.dataset.failedCheck;
  panel.classList.remove('ok', 'bad', 'partial');
  panel.classList.add(verdict === 'verified' ? 'ok' : verdict === 'failed' ? 'bad' : 'partial');
  statusLine.textContent = status;
  list.replaceChildren(
    ...checks.map((c) => {
      const li = document.createElement('li');
      const mark = c.ok ? '✓' : c.code === 'skipped' ? '–' : '✗';
      li.textContent = `${mark} ${c.check}${c.ok ? '' : ` — ${c.code}`}${!c.ok && c.code !== 'skipped' && message(c.detail) ? `: ${message(c.detail)}` : ''}`;
      return li;
    }),
  );
}

function failure(checks: Shown[]): string {
  const failed = checks.find((c) => !c.ok && c.code !== 'skipped');
  return failed ? `Verification failed: ${failed.check} (${failed.code}).` : 'Verification failed.';
}

/** A key the viewer pinned: by id (one of the header's keys, the id being its hash) or from a file. */
interface Pin {
  raw: Uint8Array;
  id: string;
}

type HubData = Extract<Data, { mode: 'hub' }>;

async function served(path: string): Promise<Response> {
  const answer = await fetch(path);
  if (!answer.ok) throw new Error(`the hub did not serve ${path} (${answer.status})`);
  return answer;
}

/**
 * The hub's two checks, in the CLI's order, against the one checkpoint the hub serves now:
 * hub_inclusion for these bytes, then witness_consistent for the heads it witnessed, each head
 * signed by one of `keys` (the keys the package is verified with).
 */
async function hubChecks(
  bytes: Uint8Array,
  data: HubData,
  keys: readonly Uint8Array[],
): Promise<[InclusionResult, WitnessCheck]> {
  const proof = async (index: number, size: number) => {
    const answer = await fetch(`${data.proof}?index=${index}&size=${size}`);
    if (!answer.ok) throw new Error(`no inclusion proof (${answer.status})`);
    return ((await answer.json()) as { proof: string[] }).proof;
  };
  let checkpoint: string;
  try {
    checkpoint = await (await served(data.checkpoint)).text();
  } catch (error) {
    const message = (error as Error).message;
    return [
      { check: 'hub_inclusion', ok: false, code: 'unreachable', detail: { message } },
      witnessUnchecked(error),
    ];
  }
  const hub = { checkpoint, verifierKey: data.verifier_key, proof };
  const inclusion = await inclusionInBrowser(bytes, {
    ...hub,
    shipId: data.ship_id,
    logIndex: data.log_index,
  });
  let heads: unknown;
  try {
    heads = await (await served(data.heads)).json();
  } catch (error) {
    return [inclusion, witnessUnchecked(error)];
  }
  return [inclusion, await witnessInBrowser(bytes, { ...hub, heads, keys })];
}

/**
 * One verification: under the viewer's pinned key when there is one, else under the key the
 * source provides (the hub's registered ship key, or the key the offline file names), which only
 * ever makes the package "self-consistent".
 */
async function verifyOnce(bytes: Uint8Array, data: Data, pin: Pin | null): Promise<void> {
  const header = headerKeys(bytes);
  const provided =
    data.mode === 'hub' ? [Buffer.from(data.ship_key, 'base64')] : header.keys.map((k) => k.raw);
  const keys = pin !== null ? [pin.raw] : provided;
  const result = await verifyInBrowser(bytes, { keys, now: now() });
  const checks: Shown[] = [...result.checks];
  if (data.mode === 'hub') checks.push(...(await hubChecks(bytes, data, keys)));
  const ok = checks.every((c) => c.ok);
  const signers = header.keys.map((k) => k.id).join(', ');
  const what =
    data.mode === 'hub'
      ? 'signatures, chain, Merkle root, receipt, log inclusion and witnessed heads'
      : 'signatures, chain, Merkle root and receipt';
  if (!ok) {
    const unpinned = checks.some((c) => c.check === 'signer_pinned' && !c.ok && c.code !== 'skipped');
    show(
      'failed',
      pin !== null && unpinned
        ? `Not verified: the package is not signed by the pinned key ${pin.id}.`
        : failure(checks),
      checks,
    );
  } else if (pin === null)
    show(
      'self-consistent',
      data.mode === 'hub'
        ? `Self-consistent: ${what} check out in your browser under the key this hub registered for the ship (${signers}). The hub also served this script and that key: pin the signer's key to verify who signed it.`
        : `Self-consistent: ${what} check out under the key the file itself names (${signers}). Pin the signer's key to verify who signed it.`,
      checks,
    );
  else
    show(
      'verified',
      `Verified: signed by the pinned key ${pin.id}; ${what} check out in your browser.`,
      checks,
    );
}

function pinByFile(text: string): Pin {
  const file = JSON.parse(text) as { publicKey?: unknown; keyId?: unknown };
  if (typeof file.publicKey !== 'string') throw new Error('not a Tally public key file (no publicKey)');
  const raw = Buffer.from(file.publicKey, 'base64');
  if (raw.length !== 32) throw new Error('the publicKey is not a 32-byte Ed25519 key');
  return { raw, id: typeof file.keyId === 'string' ? file.keyId : 'from the file' };
}

/** Wires the pin controls: a pasted key id, or a chosen or dropped public key file. */
function wirePins(bytes: Uint8Array, verify: (pin: Pin) => void): void {
  element<HTMLButtonElement>('pin-apply')?.addEventListener('click', () => {
    const id = (element<HTMLInputElement>('pin-key')?.value ?? '').trim();
    const found = headerKeys(bytes).keys.find((k) => k.id === id);
    if (found === undefined)
      show('failed', `Not verified: the package is not signed by the pinned key ${id}.`, [
        { check: 'signer_pinned', ok: false, code: 'untrusted-signer', detail: `no signer key has id ${id}` },
      ]);
    else verify({ raw: found.raw, id });
  });
  const useFile = (file: File | undefined) => {
    if (!file) return;
    void file.text().then((text) => {
      try {
        verify(pinByFile(text));
      } catch (error) {
        show('failed', `That key file cannot be used: ${(error as Error).message}`, []);
      }
    });
  };
  element<HTMLInputElement>('pin-file')?.addEventListener('change', (event) =>
    useFile((event.target as HTMLInputElement).files?.[0]),
  );
  const drop = element('pin-drop');
  drop?.addEventListener('dragover', (event) => event.preventDefault());
  drop?.addEventListener('drop', (event) => {
    event.preventDefault();
    useFile(event.dataTransfer?.files?.[0]);
  });
}

async function packageBytes(data: Data): Promise<Uint8Array> {
  if (data.mode === 'offline') return Buffer.from(data.package, 'base64');
  const response = await fetch(data.raw);
  if (!response.ok) throw new Error(`the hub did not serve the package (${response.status})`);
  return new Uint8Array(await response.arrayBuffer());
}

export async function startPanel(): Promise<void> {
  const source = element('tally-verify-data');
  if (!source) return;
  try {
    const data = JSON.parse(source.textContent ?? '') as Data;
    const bytes = await packageBytes(data);
    const run = (pin: Pin | null) =>
      verifyOnce(bytes, data, pin).catch((error: Error) =>
        show('failed', `Verification failed: ${error.message}`, []),
      );
    wirePins(bytes, (pin) => void run(pin));
    await run(null);
  } catch (error) {
    show('failed', `Verification failed: ${(error as Error).message}`, []);
  }
}
