import { openStore, transact } from '../../main/store/store.ts';
import type { JournalEvent, RunRecord } from '../../formats/review/run-record.ts';

// One short-lived store user, as one laneward command is. Bundled by the open-race test:
//   node chain.mjs open <state root>                         opens the store and exits
//   node chain.mjs write <state root> <key> <expected> <marker>
// `write` commits one journal event on <key> in one transaction and exits 3 when the
// record it read inside that transaction is not the one its predecessor committed.
const [mode, root, key, expected, marker] = process.argv.slice(2);
if (root === undefined || (mode !== 'open' && (mode !== 'write' || key === undefined || expected === undefined || marker === undefined))) {
  process.stderr.write('usage: chain.mjs open <root> | write <root> <key> <expected> <marker>\n');
  process.exit(2);
}
const store = openStore(root);
if (mode === 'write') {
  const seen = await transact(store, 'runs', key!, (current) => {
    const seq = current?.seq ?? 0;
    // Only seq matters here: the record is the store's envelope for the journal count,
    // with the fields every run record has (the store checks them as it reads).
    const record = { v: 1, run: key, commands: 0, state: 'awaiting_result', order: [], phases: {}, ...(current ?? {}), seq } as unknown as RunRecord;
    return { change: { record, events: [{ type: 'probe', at: new Date().toISOString(), marker } as unknown as JournalEvent] }, result: seq };
  });
  if (seen !== Number(expected)) {
    process.stdout.write(`STALE ${key} expected=${expected} read=${seen}\n`);
    process.exit(3);
  }
}
