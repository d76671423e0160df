import { briefRender } from '../brief/render.ts';
import { OWNER_PENDING } from '../../formats/crew/record.ts';
import { locateRun, planExport, type PlanEnv } from '../plan/index.ts';
import type { ReviewStep } from './ports.ts';

/**
 * A lane's gate under the crew's `owner` policy: the crew answers nothing. A gate still
 * pending parks the lane (CREW_OWNER_PENDING, its agent not started) with its owner brief
 * written beside its run (brief.md); a gate the owner answered lets it go on, unless the
 * answer accepted plan changes, which need a plan revision first (PLAN_AMEND_PENDING).
 */
export async function ownerGate(runDir: string, planEnv: PlanEnv): Promise<ReviewStep> {
  const { record } = locateRun(runDir, planEnv);
  if (record.state === 'gate_pending' && record.gate !== null) {
    const open = record.gate.items.length - Object.keys(record.gate.answers).length;
    const brief = await writeBrief(runDir, planEnv);
    return {
      ok: false,
      code: OWNER_PENDING,
      detail: `gate ${record.gate.rev} waits for the owner: ${open} of ${record.gate.items.length} item(s) unanswered${brief === null ? '' : `; brief: ${brief}`}`,
      attempts: 0,
      status: record.state,
    };
  }
  if (record.amendments.length > 0) {
    return { ok: false, code: 'PLAN_AMEND_PENDING', detail: `the owner's answer accepted ${record.amendments.length} plan change(s) that need a plan revision: ${record.amendments.map((a) => a.decision).join(', ')}`, attempts: 0, status: record.state };
  }
  return { ok: true, code: null, detail: null, attempts: 0, status: record.state };
}

/** Whether the lane's gate no longer waits (answered, or the run moved on): the crew drives the lane on. */
export function gateDecided(runDir: string, planEnv: PlanEnv): boolean {
  try {
    return locateRun(runDir, planEnv).record.state !== 'gate_pending';
  } catch {
    // A run that cannot be read now is looked at again at the next poll; the lane's own drive says why.
    return false;
  }
}

/**
 * The owner brief of the gate (page 1), saved as <run>/brief.md, from the run exported as
 * it stands at its gate (the brief reads the exported artifacts); null when either fails
 * (the lane's page still lists its run files then).
 */
async function writeBrief(runDir: string, planEnv: PlanEnv): Promise<string | null> {
  try {
    await planExport({ out: runDir }, planEnv);
    const rendered = briefRender({ out: runDir, page: 1, captain: false, write: true, summary: undefined });
    return rendered.ok ? rendered.written : null;
  } catch {
    return null;
  }
}
