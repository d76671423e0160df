import type { ResultCode } from '../codes/codes.ts';
import type { Issue } from '../codes/issue.ts';

/**
 * How many error lines one run (or one file) keeps and prints. The count stays exact
 * past it; only the lines stop, so a file of 20 million blank lines costs a thousand
 * issue objects, never 20 million.
 */
export const ERROR_CAP = 1000;

/**
 * The issues of one run or one file: the first {@link ERROR_CAP} in order, with the
 * exact total and an exact count per code. Appending one list to another keeps the
 * order: the kept items of the whole are always a prefix of every issue in order.
 */
export class IssueList {
  readonly items: Issue[] = [];
  total = 0;
  readonly codes: Partial<Record<ResultCode, number>> = {};

  push(found: Issue): void {
    this.total += 1;
    this.codes[found.code] = (this.codes[found.code] ?? 0) + 1;
    if (this.items.length < ERROR_CAP) this.items.push(found);
  }

  /** Appends every issue of `other` (its kept items, and its counts past them). */
  append(other: IssueList): void {
    for (const found of other.items) {
      if (this.items.length >= ERROR_CAP) break;
      this.items.push(found);
    }
    this.total += other.total;
    for (const [code, n] of Object.entries(other.codes) as [ResultCode, number][]) this.codes[code] = (this.codes[code] ?? 0) + n;
  }

  /** Issues counted but not kept. */
  get omitted(): number {
    return this.total - this.items.length;
  }
}
