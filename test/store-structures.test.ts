import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../main/store/store.ts';
import { BUNDLE, ensureBuilt } from './helpers/cli.ts';
import { attemptLines, findingsFor, planSync, resultText, snapshotOf, submitArgs, writePlan } from './helpers/plan-driver.ts';
import { tempRoot } from './helpers/tmp.ts';

// A process that holds the store open must read a record another process wrote with a
// shape it has not seen. With structures shared through the store this broke: cbor-x
// reloaded them in the middle of the decode and restored the source bytes but not its
// DataView over them. Records are now self-contained; this pins it.

describe('a long-lived reader of the state root', () => {
  const root = tempRoot('store-structures');
  const ctx = { bundle: BUNDLE, state: join(root, 'state'), cwd: root };
  beforeAll(() => ensureBuilt());

  it('reads a record another process wrote with new structures', () => {
    const store = openStore(ctx.state);
    writePlan(join(root, 'plan.md'));
    const next = planSync(ctx, ['next', '--out', join(root, 'run'), '--plan', join(root, 'plan.md')]);
    expect(next.code).toBe(0);
    const [native] = attemptLines(next.stdout);
    const runId = native!.id.replace(/-a1$/, '');
    store.runs.resetReadTxn();
    expect(store.runs.get(runId)?.attempts[native!.id]?.state).toBe('open');
    // The submit adds shapes (the bound result, the blob) this process has not loaded.
    writeFileSync(native!.result, resultText('ceo', snapshotOf(next.stdout)!.snapshot, findingsFor(native!.id, 2)));
    const submit = planSync(ctx, submitArgs(join(root, 'run'), native!, {}));
    expect(submit.code).toBe(0);
    store.runs.resetReadTxn();
    const record = store.runs.get(runId);
    expect(record?.attempts[native!.id]?.state).toBe('bound');
    expect(record?.attempts[native!.id]?.bound?.findings).toBe(2);
    expect(store.blobs.get([runId, native!.id])?.findings.map((f) => f.title)).toEqual([`Issue 1 in ${native!.id}`, `Issue 2 in ${native!.id}`]);
  });

  it('opens a state root whose name has an extension as a directory (lmdb takes such a path for a file)', () => {
    const state = join(root, 'crew.v2');
    writePlan(join(root, 'plan-v2.md'));
    const next = planSync({ ...ctx, state }, ['next', '--out', join(root, 'run-v2'), '--plan', join(root, 'plan-v2.md')]);
    expect([next.code, next.stderr]).toEqual([0, '']);
    expect(readdirSync(state).filter((name) => name.endsWith('.mdb')).sort()).toEqual(['data.mdb', 'lock.mdb']);
  });
});
