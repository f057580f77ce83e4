/**
 * The documented secret provider behind `tokenRef` and `clientSecretRef`: a reference names a file
 * under `TALLY_HOME/secrets/`, and that file must be readable by its owner only (mode 0600 or
 * narrower). A wider mode, a symlink, a missing or empty file is an error; nothing is guessed.
 * Error messages and details name the fault and the secrets directory, never the reference or the
 * file's path (a credential pasted into `tokenRef` by mistake must not be repeated in an error),
 * and never the secret's bytes. The caller names the registration field and pointer instead.
 */

import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { TallyError } from '../../core/errors.js';
import { tallyHome } from '../../core/home.js';

export type SecretErrorCode = 'bad-ref' | 'missing' | 'mode' | 'not-file' | 'empty' | 'unreadable';

export class SecretError extends TallyError<SecretErrorCode> {}

/** Resolves a deployment secret reference to its value. */
export interface SecretProvider {
  resolve(ref: string): Promise<string>;
}

const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9._-]*$/;

/**
 * Checks a reference and returns its path segments. A reference is one or more `/`-separated
 * segments of letters, digits, `.`, `_`, `-` (not starting with `.`), so it can never leave the
 * secrets directory.
 */
export function secretRefSegments(ref: string): string[] {
  const segments = ref.split('/');
  if (ref.length === 0 || ref.length > 255 || !segments.every((s) => SEGMENT.test(s))) {
    throw new SecretError(
      'bad-ref',
      "the secret reference is not a relative name of [A-Za-z0-9._-] segments (not starting with '.', at most 255 characters)",
    );
  }
  return segments;
}

/** The file provider: `TALLY_HOME/secrets/<ref>`, owner-only mode, trailing newline trimmed. */
export function fileSecretProvider(env: NodeJS.ProcessEnv): SecretProvider {
  const dir = join(tallyHome(env), 'secrets');
  const fault = (code: SecretErrorCode, what: string, detail: Record<string, unknown> = {}) =>
    new SecretError(code, `the secret file for the reference under ${dir} ${what}`, { dir, ...detail });
  return {
    async resolve(ref: string): Promise<string> {
      const path = join(dir, ...secretRefSegments(ref));
      let handle: Awaited<ReturnType<typeof open>>;
      try {
        // O_NONBLOCK: opening a FIFO (or a device) for reading would otherwise wait for a writer
        // forever; it opens at once and is then refused as not a regular file. No effect on files.
        handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | (constants.O_NONBLOCK ?? 0));
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') throw fault('missing', 'does not exist');
        if (code === 'ELOOP') throw fault('not-file', 'is a symlink');
        throw fault('unreadable', `cannot be opened (${code})`, { errno: code });
      }
      try {
        const stat = await handle.stat();
        if (!stat.isFile()) throw fault('not-file', 'is not a regular file');
        const mode = stat.mode & 0o777;
        if (process.platform !== 'win32' && (mode & 0o077) !== 0) {
          const octal = `0${mode.toString(8).padStart(3, '0')}`;
          throw fault('mode', `has mode ${octal}; it must be 0600 or narrower`, { mode: octal });
        }
        const value = (await handle.readFile('utf8')).replace(/\r?\n$/, '');
        if (value.length === 0) throw fault('empty', 'is empty');
        return value;
      } finally {
        await handle.close();
      }
    },
  };
}

export { tallyHome };
