/**
 * The documented secret provider behind `tokenRef` and `clientSecretRef`: a reference names a file
 * under `TALLY_HOME/secrets/`, and that file must be readable by its owner only (mode 0600 or
 * narrower). A wider mode, a symlink, a missing or empty file is an error; nothing is guessed.
 * Error messages name the reference and the fault, never the secret's bytes.
 */
import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { TallyError } from '../core/errors.js';

export type SecretErrorCode = 'bad-ref' | 'missing' | 'mode' | 'not-file' | 'empty' | 'unreadable';

export class SecretError extends TallyError<SecretErrorCode> {}

/** Resolves a deployment secret reference to its value. */
export interface SecretProvider {
  resolve(ref: string): Promise<string>;
}

/** `TALLY_HOME`, or `~/.tally` when unset. */
export function tallyHome(env: NodeJS.ProcessEnv): string {
  const home = env.TALLY_HOME;
  return home !== undefined && home !== '' ? home : join(homedir(), '.tally');
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
      `secret reference '${ref}' is not a relative name of [A-Za-z0-9._-] segments`,
      {
        ref,
      },
    );
  }
  return segments;
}

/** The file provider: `TALLY_HOME/secrets/<ref>`, owner-only mode, trailing newline trimmed. */
export function fileSecretProvider(env: NodeJS.ProcessEnv): SecretProvider {
  const dir = join(tallyHome(env), 'secrets');
  return {
    async resolve(ref: string): Promise<string> {
      const path = join(dir, ...secretRefSegments(ref));
      let handle: Awaited<ReturnType<typeof open>>;
      try {
        handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT')
          throw new SecretError('missing', `secret '${ref}' not found at ${path}`, { ref, path });
        if (code === 'ELOOP')
          throw new SecretError('not-file', `secret '${ref}' at ${path} is a symlink`, { ref, path });
        throw new SecretError('unreadable', `secret '${ref}' at ${path} cannot be opened (${code})`, {
          ref,
          path,
        });
      }
      try {
        const stat = await handle.stat();
        if (!stat.isFile())
          throw new SecretError('not-file', `secret '${ref}' at ${path} is not a file`, { ref, path });
        const mode = stat.mode & 0o777;
        if (process.platform !== 'win32' && (mode & 0o077) !== 0) {
          throw new SecretError(
            'mode',
            `secret '${ref}' at ${path} has mode ${mode.toString(8).padStart(4, '0')}; it must be 0600 or narrower`,
            { ref, path, mode: `0${mode.toString(8)}` },
          );
        }
        const value = (await handle.readFile('utf8')).replace(/\r?\n$/, '');
        if (value.length === 0)
          throw new SecretError('empty', `secret '${ref}' at ${path} is empty`, { ref, path });
        return value;
      } finally {
        await handle.close();
      }
    },
  };
}
