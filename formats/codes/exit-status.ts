import { constants } from 'node:os';
import type { ResultCode } from './codes.ts';

/**
 * How a result code becomes laneward's exit status: a fixed number, the provider's own
 * status (`child`), or 128 + the number of the signal that cancelled laneward (`signal`).
 */
export type ExitRule = number | 'child' | 'signal';

/**
 * The one table from result code to exit status: 0 ok, 1 fail, 2 usage, 3 refused, 124
 * timeouts, 126/127 a command that cannot run, 128+n cancelled by signal n. Applied only
 * in main/cli; engines return codes, never exit statuses.
 */
const EXIT_STATUS = {
  ARTIFACT_INVALID_JSON: 1,
  ARTIFACT_SCHEMA: 1,
  ARTIFACT_UNSUPPORTED_VERSION: 1,
  ARTIFACT_RUN_INTERRUPTED: 1,
  ARTIFACT_REVIEWER_MISSING: 1,
  ARTIFACT_PATH_ESCAPE: 1,
  ARTIFACT_MISSING: 1,
  ARTIFACT_STALE: 1,
  ARTIFACT_MALFORMED_JSONL: 1,
  ARTIFACT_DUPLICATE_ID: 1,
  ARTIFACT_UNBOUND_ID: 1,
  ARTIFACT_COUNT_MISMATCH: 1,
  ARTIFACT_DANGLING_REF: 1,
  ARTIFACT_DEPENDENCY_CYCLE: 1,
  ARTIFACT_GUARD_LINE_MISSING: 1,
  ACK_REFUSED: 3,
  ACTION_UNKNOWN: 3,
  TRUST_KEY_UNUSABLE: 3,
  KEYS_EXIST: 3,
  GATE_REPLY_UNPARSED: 1,
  GATE_REV_STALE: 1,
  GATE_PAGE_OUT_OF_RANGE: 2,
  QUEUE_UNAVAILABLE: 1,
  JOB_INVALID: 3,
  RUN_DIR_TOO_LARGE: 1,
  LANE_TAKEN: 1,
  COORDINATOR_SILENT: 1,
  ARCHIVE_UNREADABLE: 1,
  DEADLINE_EXPIRED: 124,
  PROBE_BUDGET_EXHAUSTED: 124,
  PROBE_LOG_INVALID: 124,
  RECEIPT_INVALID: 2,
  RECEIPT_EXISTS: 2,
  INIT_EXISTS: 2,
  COMMAND_NOT_FOUND: 127,
  COMMAND_NOT_EXECUTABLE: 126,
  GUARD_IO: 2,
  DESCRIPTOR_INVALID: 3,
  PROGRESS_CHANNEL_UNAVAILABLE: 3,
  PROGRESS_CHANNEL_LOST: 1,
  LEASE_EXPIRED: 124,
  PROVIDER_NO_START: 124,
  // It finished (its terminal event came): its result stands, only its exit had to be forced.
  PROVIDER_NO_EXIT: 0,
  PROVIDER_RATE_LIMITED: 1,
  PROGRESS_INVALID: 1,
  POST_PROVIDER_TIMEOUT: 124,
  OUTPUT_LIMIT: 1,
  CANCELLED: 'signal',
  TEARDOWN_UNPROVEN: 1,
  SPAWN_FAILED: 126,
  CHILD_FAILED: 'child',
  // Review runs, the trail and the brief: refusals exit 3, failures 1.
  EXECUTION_UNKNOWN: 3,
  RUN_NOT_INITIALIZED: 3,
  PHASE_NOT_AWAITING: 3,
  ATTEMPT_MISMATCH: 3,
  RESULT_RECEIPT_MISSING: 3,
  RESULT_FINDINGS_MISSING: 3,
  MODEL_FAMILY_CONFLICT: 3,
  SPEND_CAP_EXCEEDED: 3,
  CONSENSUS_MISSING: 3,
  PLAN_SECTIONS_INVALID: 3,
  PLAN_AMEND_PENDING: 3,
  PLAN_CHANGED: 3,
  PLAN_SOURCE_CHANGED: 3,
  ANSWER_BY_REQUIRED: 3,
  OWNER_REPLY_REQUIRED: 3,
  GATE_OWNER_REPLY_MISMATCH: 3,
  ANSWER_WORDS_BY_MISMATCH: 3,
  GATE_REC_STALE: 3,
  CHECKPOINT_OVERLAP: 3,
  CHECKPOINT_INVALID: 3,
  CEO_ONLY_CONFLICT: 3,
  CEO_ONLY_AFTER_INIT: 3,
  CEO_ONLY_NO_GATE: 3,
  DECISION_TRAIL_START_REQUIRED: 3,
  TRAIL_UNREADABLE: 3,
  BRIEF_INPUT_MISSING: 3,
  PLAN_UNREADABLE: 3,
  RESULT_UNREADABLE: 3,
  EXPORT_NOT_READY: 3,
  PLAN_UNCHANGED: 3,
  DECISION_UNKNOWN: 3,
  DRAFT_DIRECTION_UNRESOLVED: 1,
  ERRORS_OMITTED: 1,
  ACK_LOCKED: 1,
  TOOL_DENIED: 1,
  // QA: refusals of completion exit 3, a verdict that cannot be read 1.
  QA_NO_OBSERVER: 3,
  QA_NOT_BOOTSTRAPPED: 3,
  PREGATE_FAILED: 3,
  QUEUE_RECEIPT_STALE: 3,
  LAND_CONFLICT: 1,
  LAND_CHECK_FAILED: 1,
  RECEIPT_CARRY_PRODUCT_CHANGED: 3,
  LAND_LEASE_REJECTED: 1,
  LAND_PUSH_REJECTED: 1,
  LAND_CHECKED_OUT: 3,
  LAND_NOT_READY: 3,
  LAND_BASE_UNKNOWN: 2,
  QA_CROSS_CHECK_FAILED: 3,
  QA_BOOTSTRAP_FAILED: 3,
  QA_VERDICT_MALFORMED: 1,
  QA_LANE_ACTIVE: 3,
  QA_LANE_CLOSED: 3,
  QA_POLICY_UNENFORCEABLE: 3,
  STATE_UNAVAILABLE: 1,
  STATE_CORRUPT: 1,
  STATE_RECORD_INVALID: 1,
  EXPORT_INVALID: 1,
  CREW_INVALID: 2,
  CREW_BUSY: 3,
  CREW_LANE_FAILED: 1,
  // Waiting for a person, like a plan change waiting for its revision (PLAN_AMEND_PENDING).
  CREW_OWNER_PENDING: 3,
  // Refusals of the console's acting routes (an HTTP status on the wire; 3 where a command prints one).
  CONSOLE_TOKEN_MISSING: 3,
  CONSOLE_TOKEN_WRONG: 3,
  CONSOLE_ORIGIN_REFUSED: 3,
  CONSOLE_BODY_INVALID: 2,
  CONSOLE_ACTION_METHOD: 2,
  CONSOLE_READ_ONLY: 3,
  // A lane's end by an operator's word: it failed its crew's run (as CREW_LANE_FAILED), and is retried on request.
  CALL_CANCELLED: 1,
  LANE_CANCELLED: 1,
  // Operator requests refused as they stand (nothing was recorded).
  CREW_NOT_RUNNING: 3,
  LANE_UNKNOWN: 3,
  LANE_NOT_RETRYABLE: 3,
  CALL_NOT_RUNNING: 3,
  LANE_NOT_RUNNING: 3,
  CREW_CONTROL_UNSUPPORTED: 3,
  CONTROL_PENDING: 1,
  ATTEMPT_IN_FLIGHT: 3,
  RUN_BUSY: 3,
  PLAN_RUN_STOPPED: 1,
  WORKSPACE_FAILED: 1,
  SANDBOX_UNAVAILABLE: 3,
  WORKSPACE_DIRTY: 3,
  WORKSPACE_TOO_LARGE: 3,
  AGENT_RESULT_INVALID: 1,
  AGENT_TURNS_EXHAUSTED: 1,
  PROVIDER_INSTALL_FAILED: 1,
  USAGE: 2,
  IO_ERROR: 1,
  INTERNAL: 1,
} as const satisfies Record<ResultCode, ExitRule>;

/** What an exit status may depend on besides the code. */
export interface ExitFacts {
  /** The provider's own status, for a provider that finished by itself. */
  readonly childExitCode?: number | null;
  /** The signal that cancelled laneward (its name), for CANCELLED. */
  readonly cancelSignal?: string | null;
}

/** The exit status for `code` (null: success, the provider's own status or 0). */
export function exitStatus(code: ResultCode | null, facts: ExitFacts = {}): number {
  if (code === null) return facts.childExitCode ?? 0;
  const rule: ExitRule = EXIT_STATUS[code];
  if (rule === 'child') return facts.childExitCode ?? 1;
  if (rule === 'signal') return 128 + (constants.signals[(facts.cancelSignal ?? 'SIGTERM') as NodeJS.Signals] ?? constants.signals.SIGTERM);
  return rule;
}

/**
 * The deadline guard's reading of the same table: its own failures are exit 2 (the
 * contract's "guard errors return 2"), and so is its output breaking (a cancel by
 * SIGPIPE); everything else, the provider's status included, is as for any command.
 */
/**
 * `plan` commands refuse a stale or unparsed gate reply (exit 3) where `gate parse` and
 * `gate decisions` report it as a failed check (exit 1): the contract gives both.
 */
export function planExitStatus(code: ResultCode): number {
  if (code === 'GATE_REV_STALE' || code === 'GATE_REPLY_UNPARSED') return 3;
  return exitStatus(code);
}

export function guardExitStatus(code: ResultCode | null, facts: ExitFacts = {}): number {
  if (code === 'CANCELLED' && facts.cancelSignal === 'SIGPIPE') return 2;
  if (code !== null && EXIT_STATUS[code] === 1) return 2;
  return exitStatus(code, facts);
}
