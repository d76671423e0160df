import type { ConsoleEvent, CrewHead, CrewSnapshot, LaneView } from '../../formats/console/snapshot.ts';

/**
 * The numbered messages of `/events`. Each published snapshot gets the next number; a lane
 * remembers the number at which its JSON last changed, so the delta from any earlier
 * number is the head and the lanes changed since. The delta from the number before is
 * made once and shared by every viewer that is up to date; a viewer that fell behind (a
 * socket that did not drain) is sent the one delta that catches it up, never the backlog.
 */
export class EventLedger {
  private seq = 0;
  private head: CrewHead | undefined;
  private readonly lanes: LaneView[] = [];
  private readonly index = new Map<string, { at: number; json: string; version: number }>();
  private latestDelta = '';
  private snapshotText: string | undefined;

  /** The number of the last published snapshot (0: none yet). */
  get current(): number {
    return this.seq;
  }

  /** Publishes a snapshot; returns false (publishing nothing) when nothing changed since the last. */
  publish(snapshot: CrewSnapshot): boolean {
    const { lanes, ...head } = snapshot;
    const next = this.seq + 1;
    const changed: LaneView[] = [];
    for (const lane of lanes) {
      const json = JSON.stringify(lane);
      const known = this.index.get(lane.id);
      if (known === undefined) {
        this.index.set(lane.id, { at: this.lanes.length, json, version: next });
        this.lanes.push(lane);
        changed.push(lane);
      } else if (known.json !== json) {
        known.json = json;
        known.version = next;
        this.lanes[known.at] = lane;
        changed.push(lane);
      }
    }
    if (changed.length === 0 && this.head !== undefined && JSON.stringify(head) === JSON.stringify(this.head)) return false;
    this.seq = next;
    this.head = head;
    this.snapshotText = undefined;
    this.latestDelta = JSON.stringify({ type: 'delta', seq: next, from: next - 1, head, lanes: changed } satisfies ConsoleEvent);
    return true;
  }

  /** The last snapshot published, or undefined before the first. */
  last(): CrewSnapshot | undefined {
    return this.head === undefined ? undefined : { ...this.head, lanes: this.lanes };
  }

  /** The message that brings a viewer at `from` (-1: nothing yet) to the current number; '' when it is there. */
  since(from: number): string {
    if (this.head === undefined || from === this.seq) return '';
    if (from < 0 || from > this.seq) return this.snapshotEvent();
    if (from === this.seq - 1) return this.latestDelta;
    const lanes = this.lanes.filter((lane) => this.index.get(lane.id)!.version > from);
    return JSON.stringify({ type: 'delta', seq: this.seq, from, head: this.head, lanes } satisfies ConsoleEvent);
  }

  private snapshotEvent(): string {
    this.snapshotText ??= JSON.stringify({ type: 'snapshot', seq: this.seq, snapshot: { ...this.head!, lanes: this.lanes } } satisfies ConsoleEvent);
    return this.snapshotText;
  }
}
