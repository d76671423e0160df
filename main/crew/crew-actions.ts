import type { ActionSpec } from '../../formats/schemas/actions.ts';
import { SUPERVISION_DEFAULTS, type SupervisionSpec } from '../../workers/supervise/spec.ts';
import { nowMs } from '../../workers/supervise/monotonic-timer.ts';
import { isDescriptorRefusal, loadVerifiedAction } from '../actions/load-descriptor.ts';
import { specFrom } from '../lease/lease-options.ts';
import type { LoadedCrew } from './load-crew.ts';
import type { LaneSpec } from '../../formats/crew/file.ts';
import { PRESETS } from '../../formats/providers/presets.ts';
import { isPresetRunner } from '../../formats/providers/runner.ts';
import { LanewardError } from '../../formats/codes/error.ts';

export type CallKind = 'reviewer' | 'observer' | 'agent';

/**
 * The crew's three actions, each verified once before any lane starts: a descriptor
 * that fails its signature refuses the whole crew rather than every lane in turn.
 */
export interface CrewActions {
  /** The spec of one launch; its budget starts now (when the pool grants the slot). */
  spec(kind: CallKind, argv: readonly string[]): SupervisionSpec;
  readonly names: Readonly<Record<CallKind, string>>;
}

export function verifyCrewActions(crew: LoadedCrew): CrewActions {
  const names = { reviewer: crew.crew.actions.reviewer, observer: crew.crew.actions.observer, agent: crew.crew.actions.agent };
  const verified = {} as Record<CallKind, { spec: ActionSpec; sha256: string }>;
  for (const kind of Object.keys(names) as CallKind[]) verified[kind] = verifiedAction(crew, kind, names[kind]);
  const request = (kind: CallKind) => ({
    file: crew.actionsFile,
    trust: crew.trustFile,
    action: names[kind],
    timeoutMs: crew.crew.limits.timeout_ms,
    graceMs: SUPERVISION_DEFAULTS.graceMs,
    teardownMs: SUPERVISION_DEFAULTS.teardownMs,
    stdoutLimit: SUPERVISION_DEFAULTS.stdoutLimit,
    stderrLimit: SUPERVISION_DEFAULTS.stderrLimit,
  });
  checkPresets(crew, verified);
  return {
    names,
    spec: (kind, argv) => specFrom(verified[kind].spec, verified[kind].sha256, request(kind), argv, nowMs()),
  };
}

/**
 * One action of the crew, a refusal prefixed with the crew file's field that named what
 * was refused (`actions.agent`, `actions.trust`), the one the user must correct.
 */
function verifiedAction(crew: LoadedCrew, kind: CallKind, name: string): { spec: ActionSpec; sha256: string } {
  try {
    return loadVerifiedAction(crew.actionsFile, crew.trustFile, name);
  } catch (error) {
    if (!isDescriptorRefusal(error)) throw error;
    const field = error.code === 'ACTION_UNKNOWN' ? `actions.${kind}` : error.code === 'TRUST_KEY_UNUSABLE' ? 'actions.trust' : 'actions.file';
    throw new LanewardError(error.code, `${field}: ${error.message}`, { path: error.path, cause: error });
  }
}

const ROLE_KIND: Readonly<Record<keyof LaneSpec['runners'], CallKind>> = { native: 'reviewer', outside: 'reviewer', observer: 'observer', agent: 'agent' };

/**
 * A preset's lease is renewed by its own stream's tracker: a signed admitted-progress
 * action that names another source would renew on nothing the CLI writes (and every call
 * would expire), so such a crew is refused before any lane starts.
 */
function checkPresets(crew: LoadedCrew, verified: Readonly<Record<CallKind, { spec: ActionSpec }>>): void {
  for (const lane of crew.lanes) {
    for (const role of Object.keys(ROLE_KIND) as (keyof LaneSpec['runners'])[]) {
      const runner = lane.runners[role];
      const kind = ROLE_KIND[role];
      const action = verified[kind].spec;
      if (!isPresetRunner(runner)) {
        if (action.timeout_mode === 'admitted_progress_inactivity' && action.progress === 'preset') {
          throw new LanewardError('CREW_INVALID', `lane ${lane.id}: runners.${role} is an argv, but action ${crew.crew.actions[kind]} takes its progress from a preset`, { path: crew.file });
        }
        continue;
      }
      const want = PRESETS[runner.preset].tracker;
      if (action.timeout_mode === 'admitted_progress_inactivity' && action.progress !== want && action.progress !== 'preset') {
        throw new LanewardError('CREW_INVALID', `lane ${lane.id}: runners.${role} is preset ${runner.preset}, whose stream renews a lease through ${want}, but action ${crew.crew.actions[kind]} names progress ${action.progress}`, { path: crew.file });
      }
    }
  }
}
