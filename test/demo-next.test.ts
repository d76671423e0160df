import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { ensureBuilt, laneward } from './helpers/cli.ts';
import { tempRoot } from './helpers/tmp.ts';

const root = tempRoot('demo-next');
beforeAll(() => ensureBuilt());

describe('laneward demo crew (npm start)', () => {
  test('should end with the next three commands, the first runnable as printed', () => {
    const cwd = join(root, 'work');
    mkdirSync(cwd);
    const ran = laneward(['demo', 'crew', '--lanes', '2'], { cwd, timeoutMs: 120_000, env: { LANEWARD_STATE_ROOT: undefined } });
    expect(ran.code, ran.stderr).toBe(0);
    const tail = ran.stderr.trimEnd().split('\n').slice(-3);
    expect(tail.map((l) => l.replace(/demo-[\w-]+/, 'NAME'))).toEqual([
      'DEMO_NEXT: laneward crew status .laneward/demo/NAME/crew.json --state .laneward/state',
      'DEMO_NEXT: laneward init --repo DIR --tasks tasks.txt --providers claude-code,codex',
      'DEMO_NEXT: laneward crew run laneward-crew/crew.json --rehearse',
    ]);
    const status = laneward(tail[0]!.replace('DEMO_NEXT: laneward ', '').split(' '), { cwd, env: { LANEWARD_STATE_ROOT: undefined } });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/^CREW_STATUS: crew=demo-\S+ run=done /m);
  });
});
