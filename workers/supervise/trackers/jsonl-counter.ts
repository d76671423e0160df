import type { Verdict } from './verdict.ts';
import { CountingTracker, eventObject, IGNORE } from './_event.ts';

// Every counter line names this key; others are never parsed.
const NEEDLES = ['"progress"'];

/**
 * A generic counter: lines `{"progress": n}` with n a non-negative integer. The first n
 * (even 0) and every n above the last admitted one admit one mark, however large the
 * step; an equal n admits nothing; a lower n is `invalid` (PROGRESS_INVALID), since a
 * source that counts backwards cannot be trusted to count at all, and any number below
 * the last (-1, 4.5 after 5) counts backwards. Otherwise a line that is not such an
 * object, or whose n is not a non-negative safe integer, is prose.
 */
export class JsonlCounterTracker extends CountingTracker {
  private last: number | undefined;
  override feed(line: string): Verdict {
    const n = eventObject(line, NEEDLES)?.progress;
    if (typeof n !== 'number' || Number.isNaN(n)) return IGNORE;
    // Any number below the last admitted one went backwards, whatever its form (-1, 4.5).
    if (this.last !== undefined && n < this.last) return { kind: 'invalid', reason: `progress went from ${this.last} to ${n}` };
    // Safe integers only: above 2^53 a higher n can parse equal to the last one.
    if (!Number.isSafeInteger(n) || n < 0) return IGNORE;
    if (this.last !== undefined && n <= this.last) {
      // The last admitted n stays: the supervisor fails closed on `invalid` anyway.
      return n === this.last ? IGNORE : { kind: 'invalid', reason: `progress went from ${this.last} to ${n}` };
    }
    this.last = n;
    return this.admit(1);
  }
}
