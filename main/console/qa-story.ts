import type { AttemptStory, QaVerdictStory } from '../../formats/console/lane-story.ts';
import type { ObserverCallFacts, QaEvent } from '../../formats/qa/events.ts';
import { boundedLine, linesOr, numberOr, stringOr } from './story-values.ts';

/** The events that end one observer call. */
type CallEvent = Extract<QaEvent, { type: 'ready' | 'observer_failed' | 'update' | 'cross_check' }>;

/** One observer call as its ending event tells it. */
interface CallEnd {
  readonly verdict: QaVerdictStory;
  /** What it said (a note) or why it gave no verdict. */
  readonly detail: string | null;
  readonly facts: ObserverCallFacts;
}

/**
 * The lane's observer calls from its QA journal, in call order: each verdict (or the code
 * of a call that gave none), with its guidance, and each call as a supervised attempt.
 * The journal, not the lane record: a stop (every failed lane) clears the transcript.
 */
export function qaStory(journal: readonly QaEvent[]): { verdicts: QaVerdictStory[]; attempts: AttemptStory[] } {
  const ends = journal.flatMap((event) => (isCallEvent(event) ? [callEnd(event)] : []));
  return { verdicts: ends.map((end) => end.verdict), attempts: ends.map(observerAttempt) };
}

function isCallEvent(event: QaEvent): event is CallEvent {
  return event.type === 'ready' || event.type === 'observer_failed' || event.type === 'update' || event.type === 'cross_check';
}

function callEnd(event: CallEvent): CallEnd {
  const { call } = event;
  const at = event.at ?? null;
  switch (event.type) {
    case 'ready':
      return { verdict: { call, mode: 'bootstrap', verdict: 'pass', code: null, at, guidance: null }, detail: event.note, facts: event };
    case 'observer_failed': {
      // A bootstrap that answered `fail` is journaled as failed with QA_BOOTSTRAP_FAILED
      // and its guidance as the detail; any other code is a call that gave no verdict.
      const answered = event.code === 'QA_BOOTSTRAP_FAILED';
      const guidance = answered && event.detail !== '' ? event.detail : null;
      return { verdict: { call, mode: event.mode, verdict: answered ? 'fail' : null, code: event.code, at, guidance }, detail: event.detail, facts: event };
    }
    case 'update':
      return { verdict: { call, mode: 'cadence', verdict: event.verdict, code: null, at, guidance: event.guidance }, detail: event.note, facts: event };
    case 'cross_check':
      return {
        verdict: { call, mode: 'cross-check', verdict: event.verdict === 'error' ? null : event.verdict, code: event.code, at, guidance: event.guidance },
        detail: event.note,
        facts: event,
      };
  }
}

function observerAttempt(end: CallEnd): AttemptStory {
  const { verdict } = end;
  const run = end.facts.supervision;
  return {
    id: `observer:${verdict.call}`,
    kind: 'observer',
    voice: verdict.mode,
    phase: null,
    model: null,
    outcome: verdict.verdict === null ? 'failed' : 'completed',
    // A verdict that stands may still have ended typed (PROVIDER_NO_EXIT): the call's own code then.
    code: verdict.code ?? run?.code ?? null,
    detail: end.detail === null || end.detail === '' ? null : boundedLine(end.detail),
    startedAt: run?.started_at ?? null,
    durationMs: run?.duration_ms ?? null,
    marks: run?.marks ?? null,
    cleanupConfirmed: run?.cleanup_confirmed ?? null,
    costUsd: null,
    session: run?.session ?? null,
    exitCode: numberOr(run?.exit_code, null),
    signal: stringOr(run?.signal, null),
    stderr: linesOr(run?.stderr),
  };
}
