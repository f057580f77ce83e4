/**
 * The backend side of a stdio floor (../ahp-floor.ts), argv[2] `minimal` or `required`: one
 * request per chunk on stdin, one answer line on stdout. No transport framing beyond that, no
 * handler, no deadline.
 */
import { type FloorKind, floorAnswer } from '../ahp-floor.js';

const kind = process.argv[2] as FloorKind;
if (kind !== 'minimal' && kind !== 'required') throw new Error('usage: ahp-floor-backend minimal|required');
process.stdin.on('data', (chunk: Buffer) => process.stdout.write(`${floorAnswer(kind, chunk)}\n`));
