import { describe, expect, test } from 'vitest';
import { newLane } from '../formats/crew/record.ts';
import { CREW_WORDS, crewEventLine, crewPrinter } from '../main/cli/crew-lines.ts';
import { crewWorkerLine } from '../main/cli/crew-worker-lines.ts';
import { stopSummary } from '../main/cli/plan-stop-lines.ts';
import type { CrewEvent } from '../main/crew/crew-output.ts';
import type { CrewWorkerEvent } from '../main/queue/crew-worker.ts';

const AT = '2026-01-01T00:00:00.000Z';
const cost = { usd: 0.5, reviewUsd: 0.25, observerUsd: 0.25, agentUsd: 0, unpriced: 1 };
const failed = { ...newLane('c', 'l1', '/runs/l1', AT), stage: 'failed' as const, code: 'PROVIDER_NO_EXIT', detail: 'native voice failed', attempts: 2, turnsDone: 1 };
const interrupted = { ...newLane('c', 'l2', '/runs/l2', AT), stage: 'interrupted' as const, code: 'CANCELLED', attempts: 1 };
const retryArgv = ['laneward', 'crew', 'run', 'my crew.json', '--retry-failed', '--state', '/s'];
const resumeArgv = ['laneward', 'crew', 'run', 'my crew.json', '--state', '/s'];
const counts = { lanes: 3, complete: 1, failed: 1, interrupted: 1, waiting: 0 };

describe('crewEventLine', () => {
  test.each<[string, CrewEvent, boolean, 'out' | 'err', string]>([
    [
      'a failed lane, its retry argv joined runnable',
      { type: 'lane_ended', progress: failed, facts: { cost }, retryArgv, resumeArgv },
      false,
      'out',
      `CREW_LANE: lane=l1 status=failed code=PROVIDER_NO_EXIT attempts=2 turns=1 cost_usd=0.500000 unpriced=1 run=/runs/l1 detail=native voice failed; retry: laneward crew run 'my crew.json' --retry-failed --state /s`,
    ],
    [
      'an interrupted lane, its resume argv joined runnable',
      { type: 'lane_ended', progress: interrupted, facts: { cost }, retryArgv, resumeArgv },
      false,
      'out',
      `CREW_LANE: lane=l2 status=interrupted code=CANCELLED attempts=1 turns=0 cost_usd=0.500000 unpriced=1 run=/runs/l2 detail=CANCELLED; resume: laneward crew run 'my crew.json' --state /s`,
    ],
    ['the summary', { type: 'summary', counts, attempts: 4, durationS: 12.345, stoppedBy: null }, false, 'out', 'CREW_SUMMARY: lanes=3 complete=1 failed=1 interrupted=1 attempts=4 duration_s=12.3'],
    ['the summary, --json', { type: 'summary', counts, attempts: 4, durationS: 12.3456, stoppedBy: 'deadline' }, true, 'out', '{"summary":{"lanes":3,"complete":1,"failed":1,"interrupted":1,"attempts":4,"duration_s":12.346,"stopped_by":"deadline"}}'],
    ['the served view', { type: 'served', url: 'http://127.0.0.1:4000/' }, false, 'err', 'CREW_VIEW: http://127.0.0.1:4000/'],
    ['a requeued lane', { type: 'requeued', lane: 'l3', records: 7 }, false, 'err', 'CREW_REQUEUED: lane=l3 records=7'],
  ])('should word %s', (_name, event, json, to, text) => {
    expect(crewEventLine(event, json)).toEqual({ to, text });
  });

  test('should give a lane as its report object with --json, with no advice in it', () => {
    const { to, text } = crewEventLine({ type: 'lane_ended', progress: failed, facts: { cost }, retryArgv }, true);
    expect(to).toBe('out');
    expect(JSON.parse(text)).toMatchObject({ lane: 'l1', status: 'failed', code: 'PROVIDER_NO_EXIT', detail: 'native voice failed', attempts: 2, cost_usd: 0.5, unpriced: 1 });
  });

  test('should print lanes and the summary on stdout, the view on stderr', () => {
    const out: string[] = [];
    const err: string[] = [];
    const printer = crewPrinter({ out: (l) => out.push(l), err: (l) => err.push(l), errRaw: () => undefined, stderrIsTTY: false }, false);
    printer.event({ type: 'served', url: 'http://x/' });
    printer.event({ type: 'summary', counts, attempts: 0, durationS: 1, stoppedBy: null });
    expect([out, err, printer.stderrIsTTY]).toEqual([['CREW_SUMMARY: lanes=3 complete=1 failed=1 interrupted=1 attempts=0 duration_s=1.0'], ['CREW_VIEW: http://x/'], false]);
  });

  test('should keep the words a crew stores: its summary line, a stopped run as the plan commands word it', () => {
    const stop = { reason: 'native_failed', phase: 'eng', attempt: 'a1', state: 'failed', code: 'PROVIDER_NO_EXIT' } as const;
    expect(CREW_WORDS.stop(stop)).toBe('phase eng native voice failed (PROVIDER_NO_EXIT)');
    expect(CREW_WORDS.stop(stop)).toBe(stopSummary(stop));
    expect(CREW_WORDS.summary({ counts, attempts: 2, durationS: 0.04, stoppedBy: null })).toBe('CREW_SUMMARY: lanes=3 complete=1 failed=1 interrupted=1 attempts=2 duration_s=0.0');
  });
});

describe('crewWorkerLine', () => {
  test.each<[CrewWorkerEvent, 'out' | 'err', string]>([
    [{ type: 'ready', queue: 'redis://127.0.0.1:6379', worker: '12@h', concurrency: 2, root: '/state root' }, 'err', 'CREW_WORKER: queue=redis://127.0.0.1:6379 worker=12@h concurrency=2 state=/state root'],
    [{ type: 'lane_ended', job: 'j1', lane: 'l1', stage: 'complete', code: null }, 'out', 'CREW_WORKER: job=j1 lane=l1 status=complete'],
    [{ type: 'lane_ended', job: 'j1', lane: 'l1', stage: 'failed', code: 'PROVIDER_NO_EXIT' }, 'out', 'CREW_WORKER: job=j1 lane=l1 status=failed code=PROVIDER_NO_EXIT'],
    [{ type: 'released', job: 'j2', code: 'LANE_TAKEN' }, 'out', 'CREW_WORKER: job=j2 status=released code=LANE_TAKEN'],
    [{ type: 'refused', job: 'j3', code: 'JOB_INVALID' }, 'out', 'CREW_WORKER: job=j3 status=refused code=JOB_INVALID'],
    [{ type: 'coordinator_wait', job: 'j4', lane: 'l4' }, 'err', 'CREW_WORKER: job=j4 lane=l4 waiting=coordinator'],
    [{ type: 'released', job: 'j4', code: 'COORDINATOR_SILENT' }, 'out', 'CREW_WORKER: job=j4 status=released code=COORDINATOR_SILENT'],
    [{ type: 'queue_error', message: 'connect ECONNREFUSED\nagain' }, 'err', 'CREW_WORKER: queue error: connect ECONNREFUSED\\nagain'],
  ])('should word %j', (event, to, text) => {
    expect(crewWorkerLine(event)).toEqual({ to, text });
  });
});
