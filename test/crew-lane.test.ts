import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import type { LaneSpec } from '../formats/crew/file.ts';
import { newLane, type LaneProgress } from '../formats/crew/record.ts';
import type { CrewActions } from '../main/crew/crew-actions.ts';
import { driveLane } from '../main/crew/lane-driver.ts';
import type { LaneContext } from '../main/crew/lane-context.ts';
import type { QaPort, QaStep, ReviewPort, ReviewStep } from '../main/crew/ports.ts';
import type { SuperviseOptions } from '../main/dispatch/dispatcher.ts';
import { openStore } from '../main/store/store.ts';
import { buildOutcome, type Outcome, type OutcomeCode } from '../workers/supervise/outcome.ts';
import type { SupervisionSpec } from '../workers/supervise/spec.ts';
import { tempRoot } from './helpers/tmp.ts';

const root = tempRoot('crew-lane');
const store = openStore(join(root, 'state'));
let serial = 0;

function outcome(code: OutcomeCode | null): Outcome {
  return buildOutcome({
    code,
    action: 'agent',
    timeoutMode: 'admitted_progress_inactivity',
    descriptorSha256: null,
    childExitCode: code === null ? 0 : null,
    signal: null,
    cancelSignal: null,
    spawnError: null,
    providerStarted: true,
    attempts: 1,
    marks: 1,
    durationMs: 1,
    cleanupConfirmed: true,
    expiryLateMs: null,
    firstSignalMs: null,
    goneMs: null,
    deniedTool: null,
  });
}

const ok = (extra: Partial<QaStep> = {}): QaStep => ({ ok: true, code: null, detail: null, attempts: 1, guidance: null, lines: [], ...extra });
const reviewed = (status: string): ReviewStep => ({ ok: true, code: null, detail: null, attempts: 2, status });

/** A lane with fakes for every port; each port logs its calls, the agent writes its turn by `agent`. */
function lane(options: {
  agent?: (turn: number, prompt: string) => { code?: OutcomeCode; result?: string };
  finish?: (call: number) => QaStep;
  start?: () => QaStep;
  turns?: number;
  cancel?: AbortSignal;
}) {
  const id = `lane-${++serial}`;
  const calls: string[] = [];
  const prompts: string[] = [];
  const texts: string[] = [];
  let finishes = 0;
  const actions: CrewActions = {
    names: { reviewer: 'review', observer: 'observe', agent: 'agent' },
    spec: (kind, argv) => ({ argv, kind }) as unknown as SupervisionSpec,
  };
  const review: ReviewPort = {
    drive: async () => (calls.push('review'), reviewed('gate_pending')),
    answer: async () => (calls.push('answer'), reviewed('complete')),
    export: async () => (calls.push('export'), reviewed('complete')),
  };
  const qa: QaPort = {
    start: async (qaLaneId) => (calls.push('qa-start'), expect(qaLaneId).toBe(`c.${id}`), options.start?.() ?? ok()),
    turn: async (_lane, role, text, diff, key) => {
      texts.push(text);
      calls.push(`turn:${role}${diff ? ':diff' : ''}${key === undefined ? '' : `:${/^agent-(\d+)-/.exec(key)![1]}`}`);
      return ok({ attempts: 0 });
    },
    finish: async () => (calls.push('finish'), options.finish?.(++finishes) ?? ok()),
    stop: async () => (calls.push('qa-stop'), ok({ attempts: 0 })),
  };
  const supervise = async (spec: SupervisionSpec, runOptions?: SuperviseOptions): Promise<Outcome> => {
    await runOptions?.onSlot?.();
    const [prompt, result] = spec.argv as string[];
    const text = readFileSync(prompt!, 'utf8');
    prompts.push(text);
    const turn = Number(/turn (\d+)/.exec(text)![1]);
    calls.push(`agent:${turn}`);
    const made = options.agent?.(turn, text) ?? { result: JSON.stringify({ text: `t${turn}`, diff: turn % 2 === 1, finish: turn >= 2 }) };
    if (made.result !== undefined) writeFileSync(result!, made.result);
    return outcome(made.code ?? null);
  };
  const spec: LaneSpec = { id, plan: join(root, 'plan.md'), runners: { native: ['n'], outside: ['o'], observer: ['obs', '{lane}'], agent: ['{prompt}', '{result}'] } };
  const changes: string[] = [];
  const ctx: LaneContext = {
    crew: 'c',
    out: join(root, 'runs'),
    store,
    actions,
    review,
    qa,
    supervise,
    agentTurns: options.turns ?? 6,
    cancel: options.cancel ?? new AbortController().signal,
    onChange: (p) => changes.push(p.stage),
  };
  return { id, calls, prompts, texts, changes, drive: (over: Partial<LaneContext> = {}) => driveLane({ ...ctx, ...over }, spec) };
}

describe('a lane from its saved progress to its end', () => {
  it('should end a lane failed, starting nothing more, when a stage move saved behind fails to commit', async () => {
    const l = lane({});
    const real = store.crewLanes.put.bind(store.crewLanes);
    // The second save is the move to review, written behind: its commit fails.
    let puts = 0;
    const spy = vi.spyOn(store.crewLanes, 'put').mockImplementation(((key: never, value: never) => (++puts === 2 ? Promise.reject(new Error('commit failed\nMDB_MAP_FULL')) : real(key, value))) as never);
    try {
      const end = await l.drive();
      expect(end).toMatchObject({ stage: 'failed', code: 'INTERNAL' });
      expect(end.detail).toMatch(/MDB_MAP_FULL/);
      // Found at the lane's next save: the review ran, nothing after it started.
      expect(l.calls).toEqual(['qa-start', 'review']);
    } finally {
      spy.mockRestore();
    }
  });

  it('should run bootstrap, review, answer, agent turns under QA, the cross-check and export, in that order', async () => {
    const l = lane({});
    const end = await l.drive();
    expect(end.stage).toBe('complete');
    expect(l.calls).toEqual(['qa-start', 'review', 'answer', 'agent:1', 'turn:user:1', 'turn:assistant:diff:1', 'agent:2', 'turn:user:2', 'turn:assistant:2', 'finish', 'export']);
    expect(end).toMatchObject({ turnsDispatched: 2, turnsDone: 2, lostTurns: [], code: null });
    expect(store.crewLanes.get(['c', l.id])?.stage).toBe('complete');
    // Started again, a complete lane does nothing.
    const again = await l.drive();
    expect(again.stage).toBe('complete');
    expect(l.calls).toHaveLength(11);
  });

  it('should send the agent back to work with the guidance of a failed cross-check, and pass the second', async () => {
    const l = lane({ finish: (call) => (call === 1 ? ok({ ok: false, code: 'QA_CROSS_CHECK_FAILED', guidance: 'rerun the tests' }) : ok()) });
    const end = await l.drive();
    expect(end.stage).toBe('complete');
    expect(l.calls.filter((c) => c === 'finish')).toHaveLength(2);
    expect(l.prompts[2]).toContain('Observer guidance: rerun the tests');
    expect(end.turnsDone).toBe(3);
  });

  it('should end failed with the cross-check code once no turn is left', async () => {
    const l = lane({ turns: 2, finish: () => ok({ ok: false, code: 'QA_CROSS_CHECK_FAILED', guidance: 'no' }) });
    const end = await l.drive();
    expect(end).toMatchObject({ stage: 'failed', code: 'QA_CROSS_CHECK_FAILED' });
  });

  it('should type every agent failure: an outcome code, a malformed result, turns exhausted', async () => {
    const stalled = lane({ agent: () => ({ code: 'LEASE_EXPIRED' }) });
    const expired = await stalled.drive();
    expect(expired).toMatchObject({ stage: 'failed', code: 'LEASE_EXPIRED' });
    expect(stalled.calls.at(-1)).toBe('qa-stop');
    const malformed = await lane({ agent: () => ({ result: '{"text": 1' }) }).drive();
    expect(malformed).toMatchObject({ stage: 'failed', code: 'AGENT_RESULT_INVALID' });
    const wrongShape = await lane({ agent: () => ({ result: '{"text": "x", "diff": "yes", "finish": false}' }) }).drive();
    expect(wrongShape).toMatchObject({ stage: 'failed', code: 'AGENT_RESULT_INVALID' });
    expect(wrongShape.detail).toContain('diff');
    const endless = await lane({ turns: 3, agent: (t) => ({ result: JSON.stringify({ text: `t${t}`, diff: false, finish: false }) }) }).drive();
    expect(endless).toMatchObject({ stage: 'failed', code: 'AGENT_TURNS_EXHAUSTED', turnsDone: 3 });
  });

  it('should end failed with the code of a refused bootstrap, before any review', async () => {
    const l = lane({ start: () => ok({ ok: false, code: 'QA_OBSERVER_FAILED', detail: 'observer crashed' }) });
    const end = await l.drive();
    expect(end).toMatchObject({ stage: 'failed', code: 'QA_OBSERVER_FAILED' });
    expect(l.calls).toEqual(['qa-start', 'qa-stop']);
  });

  it('should record a turn dispatched before a crash whose result is missing as a diff-bearing turn of unknown content, and never run it again', async () => {
    const l = lane({ agent: (t) => ({ result: JSON.stringify({ text: `t${t}`, diff: false, finish: t >= 4 }) }) });
    // As a crew killed while turn 2's agent ran leaves it.
    const saved: LaneProgress = { ...newLane('c', l.id, join(root, 'runs', l.id), new Date().toISOString()), stage: 'work', turnsDispatched: 2, turnsDone: 1 };
    await store.crewLanes.put(['c', l.id], saved);
    const end = await l.drive();
    expect(end).toMatchObject({ stage: 'complete', lostTurns: [2], turnsDone: 4 });
    // QA sees turn 2 (its prompt, and an assistant turn that carries a diff) before turn 3 runs.
    expect(l.calls).toEqual(['turn:user:2', 'turn:assistant:diff:2', 'agent:3', 'turn:user:3', 'turn:assistant:3', 'agent:4', 'turn:user:4', 'turn:assistant:4', 'finish', 'export']);
    expect(l.texts.at(1)).toMatch(/^agent turn 2 was running when the crew stopped .*unknown/);
    expect(existsSync(join(root, 'runs', l.id, 'agent', 'turn-3.prompt.md'))).toBe(true);
  });

  it('should ingest the result a turn dispatched before a crash wrote (its orphan ran on), as QA would have seen it', async () => {
    const l = lane({ agent: (t) => ({ result: JSON.stringify({ text: `t${t}`, diff: false, finish: t >= 3 }) }) });
    const saved: LaneProgress = { ...newLane('c', l.id, join(root, 'runs', l.id), new Date().toISOString()), stage: 'work', turnsDispatched: 2, turnsDone: 1 };
    await store.crewLanes.put(['c', l.id], saved);
    mkdirSync(join(root, 'runs', l.id, 'agent'), { recursive: true });
    writeFileSync(join(root, 'runs', l.id, 'agent', 'turn-2.json'), JSON.stringify({ text: 'orphan changed src/a.ts', diff: true, finish: false }));
    const end = await l.drive();
    expect(end).toMatchObject({ stage: 'complete', lostTurns: [], turnsDone: 3 });
    expect(l.calls.slice(0, 3)).toEqual(['turn:user:2', 'turn:assistant:diff:2', 'agent:3']);
    expect(l.texts.at(1)).toBe('orphan changed src/a.ts');
    // A turn whose result said finish goes to the cross-check, as it would have.
    const finished = lane({});
    await store.crewLanes.put(['c', finished.id], { ...saved, lane: finished.id, runDir: join(root, 'runs', finished.id) });
    mkdirSync(join(root, 'runs', finished.id, 'agent'), { recursive: true });
    writeFileSync(join(root, 'runs', finished.id, 'agent', 'turn-2.json'), JSON.stringify({ text: 'done', diff: true, finish: true }));
    expect(await finished.drive()).toMatchObject({ stage: 'complete', turnsDone: 2 });
    expect(finished.calls).toEqual(['turn:user:2', 'turn:assistant:diff:2', 'finish', 'export']);
  });

  it('should count the children that spawned, saved at each spawn, never a turn cancelled before its agent started', async () => {
    const cancel = new AbortController();
    const l = lane({ cancel: cancel.signal });
    const spawned = { pid: 1, ticks: 1, budgetLeftMs: 1 };
    // The review port reports two reviewers spawned (its step's own count is not added again).
    const review: ReviewPort = {
      drive: async (_lane, _dir, options) => {
        await options?.onSpawn?.();
        await options?.onSpawn?.();
        return reviewed('gate_pending');
      },
      answer: async () => ({ ...reviewed('complete'), attempts: 0 }),
      export: async () => ({ ...reviewed('complete'), attempts: 0 }),
    };
    const supervise = async (spec: SupervisionSpec, runOptions?: SuperviseOptions): Promise<Outcome> => {
      await runOptions?.onSlot?.();
      const [, result] = spec.argv as string[];
      if (result!.endsWith('turn-2.json')) {
        // Cancelled after its slot, before its agent spawned.
        cancel.abort('SIGTERM');
        return buildOutcome({ ...outcome('CANCELLED'), code: 'CANCELLED', providerStarted: false, attempts: 0 });
      }
      await runOptions?.onSpawn?.(spawned);
      expect(store.crewLanes.get(['c', l.id])?.turnChild).toMatchObject({ pid: 1, ticks: 1 });
      writeFileSync(result!, JSON.stringify({ text: 't1', diff: false, finish: false }));
      return outcome(null);
    };
    const end = await l.drive({ review, supervise });
    expect(end).toMatchObject({ stage: 'interrupted', turnsDone: 1 });
    // The observer's bootstrap (1), two reviewers and one agent.
    expect(end.attempts).toBe(4);
  });

  it('should stop a cancelled lane as interrupted where it was, and resume it there when started again', async () => {
    const cancel = new AbortController();
    const l = lane({
      agent: (t) => {
        if (t === 1) cancel.abort('SIGTERM');
        return { result: JSON.stringify({ text: `t${t}`, diff: false, finish: t >= 2 }) };
      },
      cancel: cancel.signal,
    });
    const stopped = await l.drive();
    expect(stopped).toMatchObject({ stage: 'interrupted', stoppedIn: 'work', code: 'CANCELLED', turnsDone: 1 });
    const resumed = await l.drive({ cancel: new AbortController().signal });
    expect(resumed).toMatchObject({ stage: 'complete', turnsDone: 2, lostTurns: [] });
    expect(l.calls.filter((c) => c === 'qa-start' || c === 'review')).toEqual(['qa-start', 'review']);
  });
});

mkdirSync(join(root, 'runs'), { recursive: true });
