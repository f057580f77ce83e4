/**
 * Keeps the module map honest (docs/architecture.md): dependencies point one way between the
 * layers, capture channels never touch the evidence layer (the boundary records), src/core uses
 * nothing but node: built-ins, and no two files import each other in a cycle.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';

const SRC = resolve('src');
/** Each layer and the layers it may import (docs/architecture.md, "Layer rule"). */
const ALLOWED: Record<string, string[]> = {
  core: [],
  evidence: ['core'],
  ahp: ['core'],
  boundary: ['core', 'evidence', 'ahp'],
  // Channels translate; they never import evidence: the boundary records.
  capture: ['core', 'ahp', 'boundary'],
  session: ['core', 'evidence', 'ahp', 'boundary', 'capture'],
  // What clients of a hub share with it (push, witness sender, hub checks): the recorder's witness uses it.
  'hub-client': ['core', 'evidence'],
  recorder: ['core', 'evidence', 'ahp', 'boundary', 'capture', 'session', 'hub-client'],
  hub: ['core', 'evidence', 'hub-client'],
  cli: ['core', 'evidence', 'ahp', 'boundary', 'capture', 'session', 'recorder', 'hub', 'hub-client'],
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

/** Every file's imports of other src files (type-only and dynamic ones included). */
function importGraph(files: readonly string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of files)
    graph.set(
      file,
      imports(file)
        .filter((spec) => spec.startsWith('.'))
        .map((spec) => resolve(dirname(file), spec).replace(/\.js$/, '.ts')),
    );
  return graph;
}

/** Strongly connected components of more than one file (Tarjan): the import cycles. */
function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next);
    next += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.map((f) => relative(SRC, f)).sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('module dependencies', () => {
  it('every src module imports only the layers below it', () => {
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

  it('every folder under src is a layer of the map (a new one must be placed in it)', () => {
    const folders = readdirSync(SRC, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
    assert.deepEqual(
      folders.filter((f) => !(f in ALLOWED)),
      [],
    );
  });

  it('src/core depends on node: built-ins only', () => {
    const external = sources(join(SRC, 'core')).flatMap((file) =>
      imports(file)
        .filter((spec) => !spec.startsWith('.') && !spec.startsWith('node:'))
        .map((spec) => `${relative(SRC, file)} imports ${spec}`),
    );
    assert.deepEqual(external, []);
  });

  it('no import cycles between files', () => {
    assert.deepEqual(cycles(importGraph(sources(SRC))), []);
  });

  it('nothing but the CLI imports the hub server (the package root only its error classes)', () => {
    const errorModules = [
      'hub/identity.js',
      'hub/pages/errors.js',
      'hub/server/errors.js',
      'hub/store/hub-store.js',
    ];
    const importers = sources(SRC).flatMap((file) => {
      const area = relative(SRC, file).split('/')[0]!;
      if (area === 'hub' || area === 'cli') return [];
      if (area === 'index.ts')
        return imports(file)
          .filter((spec) => spec.startsWith('./hub/') && !errorModules.includes(spec.slice(2)))
          .map((spec) => `src/index.ts imports ${spec}`);
      return imports(file)
        .filter(
          (spec) => spec.startsWith('.') && relative(SRC, resolve(file, '..', spec)).split('/')[0] === 'hub',
        )
        .map((spec) => `${relative(SRC, file)} imports ${spec}`);
    });
    assert.deepEqual(importers, []);
  });

  it('the checkers see imports and cycles (they can fail)', () => {
    assert.ok(imports(join(SRC, 'cli', 'main.ts')).length > 0);
    const a = join(SRC, 'a.ts');
    const b = join(SRC, 'b.ts');
    assert.deepEqual(
      cycles(
        new Map([
          [a, [b]],
          [b, [a]],
        ]),
      ),
      [['a.ts', 'b.ts']],
    );
  });
});
