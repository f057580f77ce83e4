/**
 * The package's faces: the root and the subpaths resolve as package.json declares them (the
 * package imports itself by name), and every error class in src is a value exported from the
 * root — found by scanning the sources, so a new class cannot be forgotten.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

describe('package exports', () => {
  it('the root and tally/core, tally/evidence, tally/ahp, tally/backend resolve by name', async () => {
    // Through a variable: the specifiers resolve at run time, by package.json, as a user's would.
    const load = (name: string) => import(name) as Promise<Record<string, unknown>>;
    const [root, core, evidence, ahp, backend] = await Promise.all(
      ['tally', 'tally/core', 'tally/evidence', 'tally/ahp', 'tally/backend'].map(load),
    );
    assert.equal(typeof core!.canonicalize, 'function');
    assert.equal(typeof evidence!.verifyPackage, 'function');
    assert.equal(typeof ahp!.createHarness, 'function');
    assert.equal(typeof backend!.createBackend, 'function');
    assert.equal(typeof root!.openBoundary, 'function');
    assert.equal(root!.verifyPackage, evidence!.verifyPackage);
  });

  it('every error class defined outside the CLI is exported from the root as a value', async () => {
    const name = 'tally';
    const root = (await import(name)) as Record<string, unknown>;
    const classes = sources('src')
      .filter((f) => !f.startsWith(join('src', 'cli')))
      .flatMap((f) =>
        [
          ...readFileSync(f, 'utf8').matchAll(/export class (\w+Error|\w+Unavailable|LineTooLong) extends/g),
        ].map((m) => m[1]!),
      );
    assert.ok(classes.length > 20, `found ${classes.length} error classes`);
    const missing = classes.filter((name) => typeof root[name] !== 'function');
    assert.deepEqual(missing, []);
    for (const name of classes)
      assert.ok(new (root[name] as new (...a: unknown[]) => Error)('x', 'y') instanceof Error);
  });
});
