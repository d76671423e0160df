import type { Issue } from '../../formats/issue.ts';

/** The verdict on one run directory, in the shape `artifact validate --json` prints. */
export interface RunReport {
  readonly valid: boolean;
  readonly run: string | null;
  readonly status: string | null;
  readonly run_dir: string;
  readonly errors: readonly Issue[];
  /** Voice outcomes bound by attestation rather than an INPUT line. */
  readonly attested: number;
}
