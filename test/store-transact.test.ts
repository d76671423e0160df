import { join } from 'node:path';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { isLanewardError } from '../formats/codes/error.ts';
import type { LaneRecord } from '../formats/qa/record.ts';
import type { RunRecord } from '../formats/review/run-record.ts';
import { openStore, readJournal, readLaneJournal, transact } from '../main/store/store.ts';
import { tempRoot } from './helpers/tmp.ts';

// A write transaction whose begin failed ran nothing and wrote nothing: it is begun again.
// One that failed after its step ran is the command's failure, reported on one line.
describe('transact', () => {
  const root = tempRoot('store-transact');
  const store = openStore(join(root, 'state'));
  afterEach(() => vi.restoreAllMocks());

  // A record and events of the shape the store checks as it reads them back.
  const step = (marker: string) => (current: RunRecord | undefined) => {
    const base = { v: 1, run: 'r', commands: 0, state: 'awaiting_result', order: [], phases: {} };
    const record = { ...base, ...(current ?? {}), seq: current?.seq ?? 0 } as unknown as RunRecord;
    return { change: { record, events: [{ type: marker, at: '2026-01-01T00:00:00.000Z' } as never] }, result: record.seq };
  };
  const refuseBegin = () => {
    throw new Error('MDB_BAD_TXN: the writer lock\nwas refused');
  };

  test('should begin again a transaction whose begin failed, and commit once', async () => {
    const spy = vi.spyOn(store.runs, 'transactionSync').mockImplementationOnce(refuseBegin).mockImplementationOnce(refuseBegin);
    expect(await transact(store, 'runs', 'r1', step('one'))).toBe(0);
    expect(spy).toHaveBeenCalledTimes(3);
    expect(readJournal(store, 'r1').map((e) => e.type)).toEqual(['one']);
  });

  test('should fail STATE_UNAVAILABLE on one line after four refused begins', async () => {
    const spy = vi.spyOn(store.runs, 'transactionSync').mockImplementation(refuseBegin);
    const error = await transact(store, 'runs', 'r2', step('two')).catch((e: unknown) => e);
    expect(isLanewardError(error) && error.code).toBe('STATE_UNAVAILABLE');
    expect((error as Error).message).not.toMatch(/[\r\n]/);
    expect(spy).toHaveBeenCalledTimes(4);
    expect(readJournal(store, 'r2')).toEqual([]);
  });

  test('should never run a step twice: a failure after it ran is the command\'s', async () => {
    let steps = 0;
    const real = store.runs.transactionSync.bind(store.runs);
    const spy = vi.spyOn(store.runs, 'transactionSync').mockImplementation(((fn: () => unknown) => {
      real(fn);
      throw new Error('commit failed\nMDB_MAP_FULL');
    }) as never);
    const error = await transact(store, 'runs', 'r3', (current) => {
      steps += 1;
      return step('three')(current);
    }).catch((e: unknown) => e);
    expect(isLanewardError(error) && error.code).toBe('STATE_UNAVAILABLE');
    expect((error as Error).message).toMatch(/commit failed MDB_MAP_FULL$/);
    expect([spy.mock.calls.length, steps]).toEqual([1, 1]);
  });
});

// One transaction for every journaled table: the table names where the record and its
// journal live; the key is the record's id within it.
describe('transact keyed by table', () => {
  const root = tempRoot('store-transact-table');
  const store = openStore(join(root, 'state'));

  const laneStep = (marker: string) => (current: LaneRecord | undefined) => {
    const base = { version: 1, lane: 'k', state: 'active', turns: [], lastSent: 0, transcript: [] };
    const record = { ...base, ...(current ?? {}), seq: current?.seq ?? 0 } as unknown as LaneRecord;
    return { change: { record, events: [{ type: marker }, { type: `${marker}-2` }] as never }, result: record.seq };
  };
  const runStep = (marker: string) => (current: RunRecord | undefined) => {
    const base = { v: 1, run: 'k', commands: 0, state: 'awaiting_result', order: [], phases: {} };
    const record = { ...base, ...(current ?? {}), seq: current?.seq ?? 0 } as unknown as RunRecord;
    return { change: { record, events: [{ type: marker, at: '2026-01-01T00:00:00.000Z' } as never] }, result: record.seq };
  };

  test('should write a lane record and its journal under the lanes table, apart from a run of the same key', async () => {
    expect(await transact(store, 'lanes', 'k', laneStep('a'))).toBe(0);
    expect(await transact(store, 'runs', 'k', runStep('r'))).toBe(0);
    expect(await transact(store, 'lanes', 'k', laneStep('b'))).toBe(2);
    expect(readLaneJournal(store, 'k').map((e) => e.type)).toEqual(['a', 'a-2', 'b', 'b-2']);
    expect(readJournal(store, 'k').map((e) => e.type)).toEqual(['r']);
    expect([store.lanes.get('k')?.seq, store.runs.get('k')?.seq]).toEqual([4, 1]);
  });

  test('should write nothing for a null change and still answer the result', async () => {
    expect(await transact(store, 'lanes', 'none', (current) => ({ change: null, result: current === undefined }))).toBe(true);
    expect([store.lanes.get('none'), readLaneJournal(store, 'none')]).toEqual([undefined, []]);
  });

  test('should be the one transaction of the store: no per-table variant is exported', async () => {
    const exported = Object.keys(await import('../main/store/store.ts'));
    expect(exported.filter((name) => /^transact/i.test(name))).toEqual(['transact']);
  });
});
