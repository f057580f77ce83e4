/** Verifies one log file in a fresh process and prints {records, seconds, maxRssMb} as JSON. */
import { toPublicKey } from '../../src/core/keys.js';
import { verifyLogFile } from '../../src/evidence/log/reader.js';

const [logPath, publicKeyHex] = process.argv.slice(2);
const start = process.hrtime.bigint();
const result = await verifyLogFile(logPath!, { trusted: [toPublicKey(Buffer.from(publicKeyHex!, 'hex'))] });
const seconds = Number(process.hrtime.bigint() - start) / 1e9;
if (!result.ok) throw new Error(result.issue?.message);
process.stdout.write(
  `${JSON.stringify({ records: result.records, seconds, maxRssMb: process.resourceUsage().maxRSS / 1024 })}\n`,
);
