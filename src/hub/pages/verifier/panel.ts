/// <reference lib="dom" />
/**
 * The verification panel of a receipt page: reads what the page embeds (#tally-verify-data),
 * verifies the package in this browser and says green or red, naming the failing check. On a hub
 * page the bytes come from the hub's raw endpoint and the hub's registered ship key is pinned; the
 * log inclusion is proven against a checkpoint signed by the hub key. Offline, the file is only
 * "self-consistent" (signed by the key it names) until the viewer pins a key: then "verified".
 * Everything is written with textContent: package content never becomes markup.
 */
import { Buffer } from 'buffer';
import { headerKeys, type InclusionResult, inclusionInBrowser, verifyInBrowser } from './check.js';

type Data =
  | {
      mode: 'hub';
      raw: string;
      ship_key: string;
      ship_id: string;
      log_index: number;
      verifier_key: string;
      checkpoint: string;
      proof: string;
    }
  | { mode: 'offline'; package: string };

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

async function verifyHub(data: Extract<Data, { mode: 'hub' }>): Promise<void> {
  const response = await fetch(data.raw);
  if (!response.ok) throw new Error(`the hub did not serve the package (${response.status})`);
  const bytes = new Uint8Array(await response.arrayBuffer());
  const result = await verifyInBrowser(bytes, { keys: [Buffer.from(data.ship_key, 'base64')], now: now() });
  let inclusion: InclusionResult;
  try {
    const checkpoint = await (await fetch(data.checkpoint)).text();
    inclusion = await inclusionInBrowser(bytes, {
      checkpoint,
      verifierKey: data.verifier_key,
      shipId: data.ship_id,
      logIndex: data.log_index,
      proof: async (index, size) => {
        const answer = await fetch(`${data.proof}?index=${index}&size=${size}`);
        if (!answer.ok) throw new Error(`no inclusion proof (${answer.status})`);
        return ((await answer.json()) as { proof: string[] }).proof;
      },
    });
  } catch (error) {
    inclusion = {
      check: 'hub_inclusion',
      ok: false,
      code: 'unreachable',
      detail: { message: (error as Error).message },
    };
  }
  const checks: Shown[] = [...result.checks, inclusion];
  if (result.ok && inclusion.ok)
    show(
      'verified',
      'Verified in your browser: signatures, chain, Merkle root, receipt and log inclusion.',
      checks,
    );
  else show('failed', failure(checks), checks);
}

async function verifyOffline(
  bytes: Uint8Array,
  pinned: Uint8Array | null,
  pinnedId: string | null,
): Promise<void> {
  const header = headerKeys(bytes);
  const keys = pinned !== null ? [pinned] : header.keys.map((k) => k.raw);
  const result = await verifyInBrowser(bytes, { keys, now: now() });
  const signers = header.keys.map((k) => k.id).join(', ');
  if (!result.ok) {
    const status =
      pinnedId !== null &&
      result.checks.some((c) => c.check === 'signer_pinned' && !c.ok && c.code !== 'skipped')
        ? `Not verified: the package is not signed by the pinned key ${pinnedId}.`
        : failure(result.checks);
    show('failed', status, result.checks);
  } else if (pinned === null)
    show(
      'self-consistent',
      `Self-consistent: every check passes under the key the file itself names (${signers}). Pin the signer's key to verify who signed it.`,
      result.checks,
    );
  else
    show(
      'verified',
      `Verified: signed by the pinned key ${pinnedId}, and every check passes.`,
      result.checks,
    );
}

/** A pasted key id names one of the header's keys (the id is a hash of the key); a file carries the key. */
function pinById(bytes: Uint8Array, id: string): { raw: Uint8Array | null; id: string } {
  const found = headerKeys(bytes).keys.find((k) => k.id === id.trim());
  return { raw: found?.raw ?? null, id: id.trim() };
}

function pinByFile(text: string): { raw: Uint8Array; id: string } {
  const file = JSON.parse(text) as { publicKey?: unknown; keyId?: unknown };
  if (typeof file.publicKey !== 'string') throw new Error('not a Tally public key file (no publicKey)');
  const raw = Buffer.from(file.publicKey, 'base64');
  if (raw.length !== 32) throw new Error('the publicKey is not a 32-byte Ed25519 key');
  return { raw, id: typeof file.keyId === 'string' ? file.keyId : 'from the file' };
}

function startOffline(data: Extract<Data, { mode: 'offline' }>): Promise<void> {
  const bytes = Buffer.from(data.package, 'base64');
  const run = (raw: Uint8Array | null, id: string | null) =>
    verifyOffline(bytes, raw, id).catch((error: Error) =>
      show('failed', `Verification failed: ${error.message}`, []),
    );
  element<HTMLButtonElement>('pin-apply')?.addEventListener('click', () => {
    const value = element<HTMLInputElement>('pin-key')?.value ?? '';
    const pin = pinById(bytes, value);
    if (pin.raw === null)
      show('failed', `Not verified: the package is not signed by the pinned key ${pin.id}.`, [
        {
          check: 'signer_pinned',
          ok: false,
          code: 'untrusted-signer',
          detail: `no signer key has id ${pin.id}`,
        },
      ]);
    else void run(pin.raw, pin.id);
  });
  const useFile = (file: File | undefined) => {
    if (!file) return;
    void file.text().then((text) => {
      try {
        const pin = pinByFile(text);
        void run(pin.raw, pin.id);
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
  return run(null, null);
}

export async function startPanel(): Promise<void> {
  const source = element('tally-verify-data');
  if (!source) return;
  try {
    const data = JSON.parse(source.textContent ?? '') as Data;
    if (data.mode === 'hub') await verifyHub(data);
    else await startOffline(data);
  } catch (error) {
    show('failed', `Verification failed: ${(error as Error).message}`, []);
  }
}
