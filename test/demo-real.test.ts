import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { ensureBuilt } from './helpers/cli.ts';
import { laneLines, lanewardAsync } from './helpers/real-crew.ts';

// `laneward demo crew --providers real`: a crew of the real CLIs (found on PATH here: the
// pinned ones of test/real-clis) against the demo's own model server, no key.

const root = mkdtempSync(join(tmpdir(), 'laneward-demo-real-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

test('the real-provider demo completes every lane, each on its branch', async () => {
  ensureBuilt();
  const ran = await lanewardAsync(['demo', 'crew', '--providers', 'real', '--state', join(root, 'state')], { cwd: root, timeoutMs: 180_000 }).done;
  expect(ran.code, ran.stdout + ran.stderr).toBe(0);
  const lanes = laneLines(ran.stdout);
  expect(lanes.map((l) => l['status'])).toEqual(['complete', 'complete', 'complete', 'complete']);
  for (const lane of lanes) expect(lane['branch']).toMatch(/^laneward\/demo-[0-9-]+\/\d{8}T\d{6}Z-[0-9a-f]{6}\/lane-[1-4]$/);
  expect(ran.stderr).toMatch(/^DEMO: 4 complete, 0 failed, 0 broken on purpose: as expected /m);
  expect(ran.stdout).toMatch(/^CREW_SUMMARY: lanes=4 complete=4 failed=0 interrupted=0 /m);
}, 240_000);

test('--providers takes fixtures or real', async () => {
  const ran = await lanewardAsync(['demo', 'crew', '--providers', 'imaginary'], { cwd: root, timeoutMs: 30_000 }).done;
  expect(ran.code).toBe(2);
  expect(ran.stderr).toMatch(/\(USAGE\)$/m);
});
