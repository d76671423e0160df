import { LanewardError } from '../../../formats/codes/error.ts';
import type { PhaseTiming, RunRecord } from '../../../formats/review/run-record.ts';
import { advance, type AdvanceInput } from './advance.ts';
import { answer, type AnswerInput } from './answer.ts';
import { submit, type SubmitInput } from './bind.ts';
import { bindCheck, type CheckVerdictInput } from './carry-check.ts';
import { recordChild, settleOrphan, undispatch } from './children.ts';
import { dropExport, finishExport, markExport } from './export-mark.ts';
import { recommend } from './recommend.ts';
import { revise, type ReviseInput } from './revise.ts';
import { startRun, type StartInput } from './start.ts';
import type { TransitionContext } from './transition-context.ts';
import { cancelVoice, dispatch, failVoice, recordOutcome, releaseAttempt } from './voices.ts';

type InputOf<F> = F extends (review: RunRecord, input: infer I, step: never) => unknown ? I : never;

/** Every transition of a review run, as data: what a command asks the machine to do. */
export type Command =
  | { readonly type: 'start'; readonly input: StartInput }
  | { readonly type: 'next'; readonly input: AdvanceInput }
  | { readonly type: 'submit'; readonly input: SubmitInput }
  | { readonly type: 'answer'; readonly input: AnswerInput }
  | { readonly type: 'recommend'; readonly input: InputOf<typeof recommend> }
  | { readonly type: 'check'; readonly input: CheckVerdictInput }
  | { readonly type: 'revise'; readonly input: ReviseInput }
  | { readonly type: 'release'; readonly input: InputOf<typeof releaseAttempt> }
  | { readonly type: 'dispatch'; readonly input: InputOf<typeof dispatch> }
  | { readonly type: 'outcome'; readonly input: InputOf<typeof recordOutcome> }
  | { readonly type: 'fail'; readonly input: InputOf<typeof failVoice> }
  | { readonly type: 'cancel'; readonly input: InputOf<typeof cancelVoice> }
  | { readonly type: 'child'; readonly input: InputOf<typeof recordChild> }
  | { readonly type: 'undispatch'; readonly input: InputOf<typeof undispatch> }
  | { readonly type: 'orphan'; readonly input: InputOf<typeof settleOrphan> }
  | { readonly type: 'export'; readonly input: InputOf<typeof markExport> }
  | { readonly type: 'finish-export'; readonly input: InputOf<typeof finishExport> }
  | { readonly type: 'drop-export'; readonly input: InputOf<typeof dropExport> };

/** A transition's outcome: the record (changed in place), whether to commit it, and timings to keep. */
export interface Transition {
  readonly record: RunRecord;
  readonly changed: boolean;
  readonly history: readonly { key: [string, string]; value: PhaseTiming }[];
}

/**
 * The review run's state machine: `(record, command, step) -> transition`. It does no
 * I/O, reads no environment and names no flag: commands read files and settings, then
 * hand it data. It changes the record it is given (the store hands it a private copy;
 * a test hands it a clone) and appends the journal events and report facts to `step`.
 * A refusal is a LanewardError with the contract's code, thrown before anything is kept.
 */
export function transition(current: RunRecord | undefined, command: Command, context: TransitionContext): Transition {
  if (command.type === 'start') {
    // Two first nexts racing on one directory: the second finds the run and moves it as a next would.
    if (current !== undefined) return transition(current, { type: 'next', input: { planFileSha: null, ...(command.input.ceoOnly === undefined ? {} : { ceoOnly: command.input.ceoOnly }) } }, context);
    return { record: startRun(command.input, context), changed: true, history: [] };
  }
  if (current === undefined) throw new LanewardError('RUN_NOT_INITIALIZED', 'the run is not in its state root');
  const review = current;
  const before = context.events.length;
  let changed = true;
  let history: Transition['history'] = [];
  switch (command.type) {
    case 'next':
      history = advance(review, command.input, context);
      review.updated_at = context.now;
      changed = context.events.length > before;
      break;
    case 'submit':
      changed = submit(review, command.input, context);
      break;
    case 'answer':
      review.commands += 1;
      answer(review, command.input, context);
      review.updated_at = context.now;
      break;
    case 'recommend':
      recommend(review, command.input, context);
      break;
    case 'check':
      bindCheck(review, command.input, context);
      review.updated_at = context.now;
      break;
    case 'revise':
      revise(review, command.input, context);
      break;
    case 'release':
      releaseAttempt(review, command.input, context);
      break;
    case 'dispatch':
      dispatch(review, command.input, context);
      break;
    case 'outcome':
      recordOutcome(review, command.input, context);
      break;
    case 'fail':
      failVoice(review, command.input, context);
      break;
    case 'cancel':
      cancelVoice(review, command.input, context);
      break;
    case 'child':
      recordChild(review, command.input, context);
      break;
    case 'undispatch':
      undispatch(review, command.input, context);
      break;
    case 'orphan':
      settleOrphan(review, command.input, context);
      break;
    case 'export':
      markExport(review, command.input, context);
      break;
    case 'finish-export':
      changed = finishExport(review, command.input, context);
      break;
    case 'drop-export':
      changed = dropExport(review, command.input, context);
      break;
  }
  return { record: review, changed, history };
}
