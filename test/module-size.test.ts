import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';

const ROOT = join(import.meta.dirname, '..');
const LIMIT = 300;

/**
 * Modules over the limit that hold one concept, each with why: the rule is "no file over
 * 300 lines holds more than one concept", and these are one thing each.
 */
const ONE_CONCEPT: Record<string, string> = {
  // Every result code with its summary and fix: one table, read as one.
  'formats/codes/codes.ts': 'the code table',
  // One supervised call's states and transitions; its parts (spawn, output, timers, the
  // progress channel, output files, the outcome) are modules of their own.
  'workers/supervise/supervision.ts': 'the supervision state machine',
  // The crew page's functions, serialized one by one into its script: they call each other
  // by name, so they stay in one file (an imported name is rewritten by the test bundler).
  'formats/console/view.ts': "the crew page's renderer",
};

function lines(file: string): number {
  return readFileSync(join(ROOT, file), 'utf8').split('\n').length - 1;
}

function modulesUnder(top: string): string[] {
  return (readdirSync(join(ROOT, top), { recursive: true }) as string[]).filter((file) => file.endsWith('.ts')).map((file) => join(top, file));
}

describe('module size', () => {
  // Every source tree of ours: formats/, workers/, main/ and bench/.
  const scanned = [...modulesUnder('formats'), ...modulesUnder('workers'), ...modulesUnder('main'), ...modulesUnder('bench')];

  test(`should keep every module of formats/, workers/, main/ and bench/ within ${LIMIT} lines, but one-concept ones`, () => {
    expect(scanned).toContain('main/queue/crew-worker.ts');
    const over = scanned.filter((file) => lines(file) > LIMIT && !Object.hasOwn(ONE_CONCEPT, file)).map((file) => `${file}: ${lines(file)}`);
    expect(over).toEqual([]);
  });

  test('should name in its exceptions only modules that exist and are over the limit', () => {
    expect(Object.keys(ONE_CONCEPT).filter((file) => !scanned.includes(file) || lines(file) <= LIMIT)).toEqual([]);
  });
});
