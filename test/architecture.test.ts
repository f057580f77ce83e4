/**
 * Keeps the module map honest (docs/architecture.md): dependencies point one way, and src/core
 * uses nothing but node: built-ins.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';

const SRC = resolve('src');
const ALLOWED: Record<string, string[]> = {
  core: [],
  evidence: ['core'],
  ahp: ['core'],
  capture: ['core', 'evidence', 'ahp'],
  session: ['core', 'evidence', 'ahp', 'capture'],
  hub: ['core', 'evidence'],
  cli: ['core', 'evidence', 'ahp', 'capture', 'session', 'hub'],
};

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const statics = [...text.matchAll(/^\s*(?:import|export)\s[^;]*?from\s*'([^']+)'/gm)].map((m) => m[1]!);
  const bare = [...text.matchAll(/^\s*import\s*'([^']+)'/gm)].map((m) => m[1]!);
  const dynamic = [...text.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g)].map((m) => m[1]!);
  return [...statics, ...bare, ...dynamic];
}

describe('module dependencies', () => {
  it('every src module imports only the modules below it', () => {
    const violations: string[] = [];
    for (const file of sources(SRC)) {
      const area = relative(SRC, file).split('/')[0]!;
      if (!(area in ALLOWED)) continue;
      for (const spec of imports(file)) {
        if (!spec.startsWith('.')) continue;
        const target = relative(SRC, resolve(file, '..', spec)).split('/')[0]!;
        if (target !== area && target in ALLOWED && !ALLOWED[area]!.includes(target)) {
          violations.push(`${relative(SRC, file)} imports ${spec} (${area} → ${target})`);
        }
      }
    }
    assert.deepEqual(violations, []);
  });

  it('src/core depends on node: built-ins only', () => {
    const external = sources(join(SRC, 'core')).flatMap((file) =>
      imports(file)
        .filter((spec) => !spec.startsWith('.') && !spec.startsWith('node:'))
        .map((spec) => `${relative(SRC, file)} imports ${spec}`),
    );
    assert.deepEqual(external, []);
  });

  it('the checker itself sees imports (it can fail)', () => {
    assert.ok(imports(join(SRC, 'cli', 'main.ts')).length > 0);
  });
});
