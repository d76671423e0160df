import { Encoder } from 'cbor-x';
import * as v from 'valibot';
import { LanewardError } from '../../formats/codes/error.ts';
import { LANE_STAGES } from '../../formats/crew/record.ts';

/**
 * The shape every record of a database has at the version this laneward writes, checked
 * as each value is decoded: a record of another version (a later laneward's) or another
 * shape (another program's, a damaged one) is refused as STATE_RECORD_INVALID where it
 * is read, rather than failing later as INTERNAL or being taken for what it is not.
 * Only the version and the fields every reader relies on are checked (loose objects:
 * fields added later pass), so a read stays about a microsecond dearer.
 */
const text = v.string();
const count = v.pipe(v.number(), v.integer(), v.minValue(0));
const event = v.looseObject({ type: text });

const SHAPES = {
  runs: () =>
    v.looseObject({
      v: v.literal(1),
      run: text,
      seq: count,
      commands: count,
      state: v.picklist(['awaiting_result', 'phase_closed', 'gate_pending', 'complete', 'reviewed', 'incomplete', 'interrupted']),
      order: v.array(text),
      phases: v.looseObject({}),
    }),
  journal: () => v.looseObject({ type: text, at: text }),
  blobs: () => v.looseObject({}),
  history: () => v.looseObject({}),
  'crew-lanes': () => v.looseObject({ crew: text, lane: text, stage: v.picklist(LANE_STAGES), runDir: text, turnsDispatched: count, turnsDone: count }),
  'crew-drivers': () => v.looseObject({ pid: v.number(), ticks: text, since: text }),
  'crew-runs': () => v.looseObject({ crew: text, startedAt: text }),
  lanes: () =>
    v.looseObject({
      version: v.literal(1),
      lane: text,
      seq: count,
      state: v.picklist(['active', 'stopped', 'complete']),
      turns: v.array(v.looseObject({ index: count })),
      lastSent: count,
      reserved: v.optional(v.array(v.looseObject({ call: count, ranges: v.array(v.tuple([count, count])) }))),
      transcript: v.array(v.looseObject({})),
    }),
  laneJournal: () => event,
  'crew-control': () =>
    v.looseObject({
      v: v.literal(1),
      crew: text,
      seq: count,
      action: v.picklist(['retry', 'cancel_call', 'cancel_lane', 'stop']),
      lane: v.nullable(text),
      by: text,
      status: v.picklist(['requested', 'applied', 'refused']),
    }),
  'queue-mirror': () => v.looseObject({ id: text, db: text, key: v.instance(Uint8Array), value: v.instance(Uint8Array) }),
} satisfies Record<string, () => v.GenericSchema>;

export type DatabaseName = keyof typeof SHAPES;

/** lmdb's `encoder` option for `db` of the root `dir`: cbor-x, each decoded value checked. */
export function checkedCbor(dir: string, db: DatabaseName): { Encoder: typeof Encoder } {
  let schema: v.GenericSchema | undefined;
  class CheckedEncoder extends Encoder {
    override decode(bytes: Buffer | Uint8Array, ...rest: unknown[]): unknown {
      const value: unknown = (super.decode as (bytes: Buffer | Uint8Array, ...rest: unknown[]) => unknown)(bytes, ...rest);
      schema ??= SHAPES[db]();
      const checked = v.safeParse(schema, value);
      if (checked.success) return value;
      const first = checked.issues[0];
      const at = first.path?.map((item) => String(item.key)).join('.') ?? '';
      throw new LanewardError('STATE_RECORD_INVALID', `a record of the ${db} database is not one this laneward reads (${first.message}${at === '' ? '' : ` at ${at}`})`, { path: dir });
    }
  }
  return { Encoder: CheckedEncoder };
}
