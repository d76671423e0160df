import { describe, expect, test } from 'vitest';
import type { ResultCode } from '../formats/codes/codes.ts';
import { exitStatus, guardExitStatus } from '../formats/codes/exit-status.ts';

describe('exitStatus: the one table from result code to exit status', () => {
  test.each([
    [null, {}, 0],
    [null, { childExitCode: 0 }, 0],
    ['CHILD_FAILED', { childExitCode: 7 }, 7],
    ['CHILD_FAILED', { childExitCode: 137 }, 137],
    ['DEADLINE_EXPIRED', {}, 124],
    ['LEASE_EXPIRED', {}, 124],
    ['POST_PROVIDER_TIMEOUT', {}, 124],
    ['PROBE_BUDGET_EXHAUSTED', {}, 124],
    ['PROBE_LOG_INVALID', {}, 124],
    ['DESCRIPTOR_INVALID', {}, 3],
    ['PROGRESS_CHANNEL_UNAVAILABLE', {}, 3],
    ['ACK_REFUSED', {}, 3],
    ['COMMAND_NOT_FOUND', {}, 127],
    ['COMMAND_NOT_EXECUTABLE', {}, 126],
    ['SPAWN_FAILED', {}, 126],
    ['CANCELLED', { cancelSignal: 'SIGINT' }, 130],
    ['CANCELLED', { cancelSignal: 'SIGTERM' }, 143],
    ['CANCELLED', { cancelSignal: 'SIGHUP' }, 129],
    ['CANCELLED', { cancelSignal: 'SIGPIPE' }, 141],
    ['CANCELLED', {}, 143],
    ['TEARDOWN_UNPROVEN', {}, 1],
    ['OUTPUT_LIMIT', {}, 1],
    ['USAGE', {}, 2],
    ['RECEIPT_INVALID', {}, 2],
    ['GUARD_IO', {}, 2],
    ['TOOL_DENIED', {}, 1],
    ['QA_VERDICT_MALFORMED', {}, 1],
    ['QA_NO_OBSERVER', {}, 3],
    ['QA_NOT_BOOTSTRAPPED', {}, 3],
    ['QA_CROSS_CHECK_FAILED', {}, 3],
    ['QA_BOOTSTRAP_FAILED', {}, 3],
    ['QA_LANE_ACTIVE', {}, 3],
    ['QA_LANE_CLOSED', {}, 3],
    ['QA_POLICY_UNENFORCEABLE', {}, 3],
    ['CREW_INVALID', {}, 2],
    ['CREW_BUSY', {}, 3],
    ['CREW_LANE_FAILED', {}, 1],
    ['AGENT_RESULT_INVALID', {}, 1],
    ['AGENT_TURNS_EXHAUSTED', {}, 1],
    ['WORKSPACE_FAILED', {}, 1],
    ['WORKSPACE_DIRTY', {}, 3],
    ['PLAN_RUN_STOPPED', {}, 1],
    ['ATTEMPT_IN_FLIGHT', {}, 3],
    ['RUN_BUSY', {}, 3],
    ['ANSWER_WORDS_BY_MISMATCH', {}, 3],
    ['PROVIDER_INSTALL_FAILED', {}, 1],
    ['PROVIDER_NO_START', {}, 124],
    ['TRUST_KEY_UNUSABLE', {}, 3],
    ['ACTION_UNKNOWN', {}, 3],
    ['KEYS_EXIST', {}, 3],
  ] as [ResultCode | null, { childExitCode?: number; cancelSignal?: string }, number][])('%s %j exits %i', (code, facts, exit) => {
    expect(exitStatus(code, facts)).toBe(exit);
  });
});

describe('guardExitStatus: the guard reads the same table, its own failures exit 2', () => {
  test.each([
    [null, { childExitCode: 3 }, 3],
    ['CHILD_FAILED', { childExitCode: 1 }, 1],
    ['DEADLINE_EXPIRED', {}, 124],
    ['COMMAND_NOT_FOUND', {}, 127],
    ['SPAWN_FAILED', {}, 126],
    ['CANCELLED', { cancelSignal: 'SIGINT' }, 130],
    ['CANCELLED', { cancelSignal: 'SIGPIPE' }, 2],
    ['TEARDOWN_UNPROVEN', {}, 2],
    ['INTERNAL', {}, 2],
    ['PROBE_LOG_INVALID', {}, 124],
  ] as [ResultCode | null, { childExitCode?: number; cancelSignal?: string }, number][])('%s %j exits %i', (code, facts, exit) => {
    expect(guardExitStatus(code, facts)).toBe(exit);
  });
});
