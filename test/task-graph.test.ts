import { describe, expect, test } from 'vitest';
import { checkTaskGraph, findCycles, type TaskNode } from '../workers/validate/task-graph.ts';

const task = (id: string, line: number, dependsOn: string[], pr?: string): TaskNode => ({ id, line, pr, dependsOn });

describe('checkTaskGraph', () => {
  test('should accept dependencies on task ids and on pr labels other tasks carry', () => {
    const tasks = [task('a', 1, [], 'pr-1'), task('b', 2, ['a'], 'pr-1'), task('c', 3, ['pr-1'], 'pr-2')];
    expect(checkTaskGraph(tasks, 'tasks.jsonl').items).toEqual([]);
  });

  test('should not make a task depend on itself through its own label', () => {
    const tasks = [task('a', 1, ['pr-1'], 'pr-1'), task('b', 2, [], 'pr-1')];
    expect(checkTaskGraph(tasks, 'tasks.jsonl').items).toEqual([]);
  });

  test('should report a dangling dependency at its index', () => {
    expect(checkTaskGraph([task('a', 1, []), task('b', 2, ['a', 'zz'])], 'tasks.jsonl').items).toEqual([
      { code: 'ARTIFACT_DANGLING_REF', path: 'tasks.jsonl:2.depends_on[1]', message: 'no task or pr label zz' },
    ]);
  });

  test.each([
    [[task('a', 1, ['a'])], 'a -> a', 'tasks.jsonl:1.depends_on'],
    [[task('a', 1, ['b']), task('b', 2, ['a'])], 'a -> b -> a', 'tasks.jsonl:1.depends_on'],
    [[task('x', 1, []), task('a', 2, ['c']), task('b', 3, ['a']), task('c', 4, ['b'])], 'a -> c -> b -> a', 'tasks.jsonl:2.depends_on'],
    [[task('a', 1, ['pr-9'], 'pr-1'), task('b', 2, ['pr-1'], 'pr-9')], 'a -> b -> a', 'tasks.jsonl:1.depends_on'],
  ])('should report the cycle %#  as %s', (tasks, message, path) => {
    expect(checkTaskGraph(tasks, 'tasks.jsonl').items).toEqual([{ code: 'ARTIFACT_DEPENDENCY_CYCLE', path, message }]);
  });

  test('should report two separate cycles once each', () => {
    const tasks = [task('a', 1, ['b']), task('b', 2, ['a']), task('c', 3, ['d']), task('d', 4, ['c', 'a'])];
    expect(checkTaskGraph(tasks, 't').items.map((found) => found.message)).toEqual(['a -> b -> a', 'c -> d -> c']);
  });
});

describe('findCycles', () => {
  test('should walk a 200,000-task chain without overflowing the stack', () => {
    const edges = Array.from({ length: 200_000 }, (_, i) => (i + 1 < 200_000 ? [i + 1] : [0]));
    const cycles = findCycles(edges);
    expect(cycles).toHaveLength(1);
    expect(cycles[0]).toHaveLength(200_000);
  });
});
