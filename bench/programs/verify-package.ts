/**
 * Verifies one package file in a fresh process, streaming it from disk, and prints
 * {records, seconds, maxRssMb, ok} as JSON. Usage: verify-package.js PKG PUBLIC_KEY_HEX [WORKERS]
 */
import { toPublicKey } from '../../src/core/keys.js';
import { readLogLines } from '../../src/evidence/log/reader.js';
import { verifyPackageLines } from '../../src/evidence/package/verify.js';

const [path, publicKeyHex, workers] = process.argv.slice(2);
const start = process.hrtime.bigint();
const result = await verifyPackageLines(readLogLines(path!), {
  trusted: [toPublicKey(Buffer.from(publicKeyHex!, 'hex'))],
  now: new Date('2026-12-01T00:00:00Z'),
  ...(workers === undefined ? {} : { workers: Number(workers) }),
});
const seconds = Number(process.hrtime.bigint() - start) / 1e9;
if (!result.ok) throw new Error(JSON.stringify(result.checks.find((c) => !c.ok)));
const records = result.receipt?.record_count ?? 0;
const maxRssMb = process.resourceUsage().maxRSS / 1024;
process.stdout.write(
  `${JSON.stringify({ records, seconds, maxRssMb, receiptBytes: result.checks.find((c) => c.check === 'receipt_recomputed')?.detail })}\n`,
);
