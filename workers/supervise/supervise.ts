import { existsSync } from 'node:fs';
import { adoptOrphan } from './adopt.ts';
import type { Outcome } from './outcome.ts';
import type { SupervisionHooks, SupervisionSpec } from './spec.ts';
import { Supervision } from './supervision.ts';

export { TREE_VAR } from './spawn-provider.ts';

/**
 * The one supervision engine: every provider attempt, reviewer and probe laneward runs
 * goes through it, in-process (the CLI, one at a time) or in a pool worker (many at once).
 *
 *     supervise(spec, signal?, hooks?) -> Promise<Outcome>
 *
 * - `spec` (plain data, {@link SupervisionSpec}): argv (no shell), env, cwd, stdio,
 *   timeout mode, progress source, budgets, and `startedAt` on the monotonic clock.
 * - `signal`: aborting it cancels; its reason names the signal (`'SIGINT'`), default
 *   SIGTERM. Cancellation wins over every other cause, in every phase.
 * - `hooks`: output, spawn and renewal callbacks, and the shared /proc snapshots.
 * - The promise never rejects for anything the provider does: spawn errors, timeouts,
 *   cancellation and teardown all end in an {@link Outcome}, one shape keyed on `status`.
 *
 * Before launch the caller's fixed total deadline holds (less the cleanup reserve). After
 * launch a total-deadline action keeps that deadline; an admitted-progress action turns
 * it into an inactivity lease that only admitted marks renew (a byte 0x01 on fd 3, or a
 * tracker's mark from stdout), with no wall-clock cap. Any failure tears the tree down
 * (SIGTERM, grace, SIGKILL, proven gone) under its own budget; so does the provider's own
 * exit, so background descendants never outlive it. After the provider exits, draining
 * its output gets one fresh budget. Exactly one spawn; nothing is ever retried.
 */
export function supervise(spec: SupervisionSpec, signal?: AbortSignal, hooks: SupervisionHooks = {}): Promise<Outcome> {
  // An orphan whose output went to a file is supervised like a child of ours, from that
  // file; one whose output nobody can read any more is only held to its deadline.
  if (spec.adopt !== undefined && (spec.stdoutFile === undefined || !existsSync(spec.stdoutFile))) return adoptOrphan(spec, spec.adopt, signal, hooks);
  return new Supervision(spec, hooks, signal).run();
}
