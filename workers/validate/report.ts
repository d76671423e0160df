import type { ResultCode } from '../../formats/codes/codes.ts';
import type { Issue } from '../../formats/codes/issue.ts';

/** The verdict on one run directory, in the shape `artifact validate --json` prints. */
export interface RunReport {
  readonly valid: boolean;
  readonly run: string | null;
  readonly status: string | null;
  readonly run_dir: string;
  /** The first ERROR_CAP errors in order. */
  readonly errors: readonly Issue[];
  /** Errors counted past the cap (0 when every error is listed). */
  readonly errors_omitted: number;
  /** Every error counted by code, the omitted ones included. */
  readonly codes: Partial<Record<ResultCode, number>>;
  /** Voice outcomes bound by attestation rather than an INPUT line. */
  readonly attested: number;
}

/**
 * The contract's --json object for one run. `errors_omitted` is added only when the
 * error list was capped, so an ordinary report keeps exactly the contract's keys.
 */
export function reportObject(report: RunReport): Record<string, unknown> {
  const { valid, run, status, run_dir, errors, errors_omitted } = report;
  return errors_omitted > 0 ? { valid, run, status, run_dir, errors, errors_omitted } : { valid, run, status, run_dir, errors };
}
