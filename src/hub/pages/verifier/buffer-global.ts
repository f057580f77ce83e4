/** Gives the browser bundle the `Buffer` the shared code uses (the bundler injects this export). */
export { Buffer } from 'buffer';
