import * as v from 'valibot';

/**
 * A crew file's `pregate`: the repository's own checks, each an argv run as it is (never
 * by a shell) in the lane's worktree at the head its agent finished at, before the
 * cross-check (a passed cross-check closes the lane's QA: a failed check could no longer
 * go back to the agent after it). `id` names the check in pregate.json (default `check-<n>`, from 1);
 * `tier` is recorded as written (unit, integration, ...); `timeout_ms` bounds the check
 * (default: the crew's limits.timeout_ms).
 */
export const pregateChecksSchema = v.pipe(
  v.array(
    v.strictObject({
      id: v.optional(v.pipe(v.string(), v.regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/, "Expected a check id of letters, digits, '.', '_' or '-'"))),
      argv: v.pipe(v.array(v.pipe(v.string(), v.minLength(1, 'Expected a non-empty argv element'))), v.minLength(1, 'Expected an argv array with the program first')),
      tier: v.optional(v.pipe(v.string(), v.minLength(1, 'Expected a non-empty tier'))),
      timeout_ms: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(2 ** 31 - 1))),
    }),
  ),
  v.minLength(1, 'Expected at least one check'),
  v.check((checks) => new Set(checks.map((c, i) => c.id ?? `check-${i + 1}`)).size === checks.length, 'Expected every check id once'),
);

export type PregateChecks = v.InferOutput<typeof pregateChecksSchema>;

/** One check as a lane runs it: its id resolved. */
export interface PregateCheck {
  readonly id: string;
  readonly argv: readonly string[];
  readonly tier: string | null;
  readonly timeoutMs: number;
}

/** The crew file's checks with their ids and budgets resolved. */
export function pregateChecks(checks: PregateChecks, defaultTimeoutMs: number): PregateCheck[] {
  return checks.map((c, i) => ({ id: c.id ?? `check-${i + 1}`, argv: c.argv, tier: c.tier ?? null, timeoutMs: c.timeout_ms ?? defaultTimeoutMs }));
}
