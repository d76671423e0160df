import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, test } from 'vitest';
import { ROOT } from './helpers/cli.ts';

/** Every relative import (static, dynamic, re-export, type-only) of every source file. */
function importGraph(): Map<string, string[]> {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) files.push(path);
    }
  };
  for (const top of ['main', 'workers', 'formats', 'bench', 'fixtures']) walk(join(ROOT, top));
  const graph = new Map<string, string[]>();
  const spec = /(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+\.ts)'/g;
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    graph.set(relative(ROOT, file), [...text.matchAll(spec)].map((m) => relative(ROOT, resolve(dirname(file), m[1]!))));
  }
  return graph;
}

/** The cycles of the graph, each as the path that closes it (Tarjan's strongly connected components). */
function cycles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('the source tree', () => {
  const graph = importGraph();

  test('should resolve every relative import to a file that exists', () => {
    const missing = [...graph].flatMap(([from, tos]) => tos.filter((to) => !graph.has(to)).map((to) => `${from} -> ${to}`));
    expect(missing).toEqual([]);
  });

  test('should hold no import circle (no file reaches itself through its imports)', () => {
    expect(graph.size).toBeGreaterThan(100);
    expect(cycles(graph)).toEqual([]);
  });

  test('should keep the review-run machine free of I/O, environment and flags', () => {
    const core = [...graph.keys()].filter((file) => file.startsWith('main/plan/core/'));
    expect(core.length).toBeGreaterThan(5);
    for (const file of core) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      expect(text, file).not.toMatch(/from 'node:(fs|child_process|net|http|os|process)'/);
      expect(text, file).not.toMatch(/process\.(env|cwd|pid|argv)/);
      expect(text, file).not.toMatch(/new LanewardError\('USAGE'/);
      for (const to of graph.get(file)!) expect(`${file} -> ${to}`).toMatch(/ -> (main\/plan\/core\/|formats\/)/);
    }
  });

  test('should start every export at one entry point (exportRun, or the plan export command on it)', () => {
    const importers = [...graph].filter(([, tos]) => tos.includes('main/plan/export.ts')).map(([file]) => file);
    const named = importers.flatMap((file) =>
      [...readFileSync(join(ROOT, file), 'utf8').matchAll(/import\s*(?:type\s*)?\{([^}]*)\}\s*from\s*'[^']*\/export\.ts'/g)].flatMap((m) => m[1]!.split(',').map((name) => `${file}: ${name.trim().replace(/^type\s+/, '')}`)),
    );
    expect(named.length).toBeGreaterThan(1);
    expect(named.filter((name) => !/: (planExport|exportRun|ExportOptions|ExportFrom)$/.test(name))).toEqual([]);
  });

  test('should keep the engines (main/crew, main/queue, main/plan, main/qa) from importing the edge (main/cli)', () => {
    const engines = [...graph.keys()].filter((file) => /^main\/(crew|queue|plan|qa)\//.test(file));
    expect(engines.length).toBeGreaterThan(50);
    expect(engines.flatMap((file) => graph.get(file)!.filter((to) => to.startsWith('main/cli/')).map((to) => `${file} -> ${to}`))).toEqual([]);
  });
});
