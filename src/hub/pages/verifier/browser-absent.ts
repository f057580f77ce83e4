/**
 * What the browser bundle puts where shared code imports a Node.js built-in the verifier never
 * calls in a page (files, workers, sockets): any use throws, so nothing silently does less.
 */
function absent(): never {
  throw new Error('not available in the browser verifier');
}
export const availableParallelism = () => 1;
export const createReadStream = absent;
export const existsSync = absent;
export const linkSync = absent;
export const mkdirSync = absent;
export const open = absent;
export const readFileSync = absent;
export const readdirSync = absent;
export const rename = absent;
export const rm = absent;
export const statSync = absent;
export const unlinkSync = absent;
export const writeFileSync = absent;
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
