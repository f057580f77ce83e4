/**
 * What the browser bundle puts where shared code imports a Node.js built-in the verifier never
 * calls in a page (files, workers, sockets): any use throws, so nothing silently does less.
 */
function absent(): never {
  throw new Error('not available in the browser verifier');
}
export const availableParallelism = () => 1;
export const closeSync = absent;
/** Read when a module loads (open flags): empty, so every flag is absent, and nothing opens. */
export const constants = {};
export const createReadStream = absent;
export const existsSync = absent;
export const fstatSync = absent;
export const ftruncateSync = absent;
export const linkSync = absent;
export const mkdirSync = absent;
export const open = absent;
export const openSync = absent;
export const readFileSync = absent;
export const readSync = absent;
export const readdirSync = absent;
export const rename = absent;
export const rm = absent;
export const statSync = absent;
export const unlinkSync = absent;
export const writeFileSync = absent;
export const writeSync = absent;
export const homedir = absent;
export const lookup = absent;
export const isIP = absent;
export const setTimeout = absent;
export class Worker {
  constructor() {
    absent();
  }
}
export const parentPort = null;
export const workerData = null;
export default {};
