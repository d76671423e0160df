import { join } from 'node:path';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { isLanewardError } from '../formats/codes/error.ts';
import type { RunRecord } from '../formats/review/run-record.ts';
import { openStore, readJournal, transact } from '../main/store/store.ts';
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
    expect(await transact(store, 'r1', step('one'))).toBe(0);
    expect(spy).toHaveBeenCalledTimes(3);
    expect(readJournal(store, 'r1').map((e) => e.type)).toEqual(['one']);
  });

  test('should fail STATE_UNAVAILABLE on one line after four refused begins', async () => {
    const spy = vi.spyOn(store.runs, 'transactionSync').mockImplementation(refuseBegin);
    const error = await transact(store, 'r2', step('two')).catch((e: unknown) => e);
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
    const error = await transact(store, 'r3', (current) => {
      steps += 1;
      return step('three')(current);
    }).catch((e: unknown) => e);
    expect(isLanewardError(error) && error.code).toBe('STATE_UNAVAILABLE');
    expect((error as Error).message).toMatch(/commit failed MDB_MAP_FULL$/);
    expect([spy.mock.calls.length, steps]).toEqual([1, 1]);
  });
});
