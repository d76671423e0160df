import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { writeDemoCrew } from '../main/demo/demo-crew.ts';
import { BUNDLE, ensureBuilt, laneward, ROOT } from './helpers/cli.ts';
import { exitOf, killStrays, until } from './helpers/procs.ts';
import { tempRoot } from './helpers/tmp.ts';
import { renderLanePage } from '../formats/console/lane-page.ts';
import { driveParked } from '../main/crew/owner-wait.ts';
import type { LaneProgress } from '../formats/crew/record.ts';

const root = tempRoot('crew-owner');
const fixtures = join(ROOT, 'fixtures');
let serial = 0;

beforeAll(() => ensureBuilt());
afterEach(() => {
  expect(killStrays(root)).toEqual([]);
});

/** A crew of `lanes` lanes whose file says "answer": "owner". */
function ownerCrew(lanes: number) {
  const dir = join(root, `crew-${++serial}`);
  const file = writeDemoCrew({ dir, crew: `o${serial}`, lanes, broken: 0, concurrency: 4, fixtures });
  const value = JSON.parse(readFileSync(file, 'utf8'));
  value.answer = 'owner';
  writeFileSync(file, JSON.stringify(value));
  return { dir, file, state: join(dir, 'state') };
}

const lines = (text: string, prefix: string) => text.split('\n').filter((l) => l.startsWith(prefix));
const field = (line: string, name: string) => new RegExp(`(?:^| )${name}=(\\S+)`).exec(line)?.[1];
const decisions = (dir: string, lane: string) =>
  readFileSync(join(dir, 'runs', lane, 'decisions.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l));

describe('crew answer: the owner answers the gates', () => {
  it('should stop every lane at its gate, its agent not started, end waiting (exit 3) and continue each lane the owner answered on the next run', () => {
    const c = ownerCrew(2);
    const first = laneward(['crew', 'run', c.file, '--state', c.state], { cwd: c.dir });
    expect(first.code).toBe(3);
    const ends = lines(first.stdout, 'CREW_LANE: ');
    expect(ends.map((l) => [field(l, 'lane'), field(l, 'status'), field(l, 'code')])).toEqual([
      ['lane-1', 'waiting', 'CREW_OWNER_PENDING'],
      ['lane-2', 'waiting', 'CREW_OWNER_PENDING'],
    ]);
    expect(ends[0]).toMatch(/ turns=0 .* detail=gate 1 waits for the owner: \d+ of \d+ item\(s\) unanswered; brief: \S+brief\.md; answer: laneward crew answer \S+ --lane lane-1 --reply REPLY --by NAME --state \S+$/);
    expect(lines(first.stdout, 'CREW_SUMMARY: ')[0]).toMatch(/^CREW_SUMMARY: lanes=2 complete=0 failed=0 interrupted=0 waiting=2 attempts=\d+ duration_s=/);
    expect(lines(first.stdout, 'CREW_ANSWER: ')).toEqual([`CREW_ANSWER: laneward crew answer ${c.file} --all --reply REPLY --by NAME --state ${c.state}`]);
    // No agent turn was prompted; the owner brief is written.
    for (const lane of ['lane-1', 'lane-2']) {
      expect(existsSync(join(c.dir, 'runs', lane, 'agent'))).toBe(false);
      expect(readFileSync(join(c.dir, 'runs', lane, 'brief.md'), 'utf8')).toMatch(/\S/);
    }
    // crew status --lane shows it waiting for the owner, with the command that answers it.
    const status = laneward(['crew', 'status', c.file, '--state', c.state, '--lane', 'lane-1'], { cwd: c.dir });
    expect(lines(status.stdout, 'LANE_OWNER: ')).toEqual([`LANE_OWNER: waiting for the owner brief=${join(c.dir, 'runs', 'lane-1', 'brief.md')} answer=laneward crew answer ${c.file} --lane lane-1 --reply REPLY --by NAME --state ${c.state}`]);

    // The lane's page (the story crew view serves at /lanes/lane-1) says it waits, with its brief and the command.
    const story = JSON.parse(laneward(['crew', 'status', c.file, '--state', c.state, '--lane', 'lane-1', '--json'], { cwd: c.dir }).stdout);
    expect(story.owner).toEqual({ waiting: true, brief: join(c.dir, 'runs', 'lane-1', 'brief.md'), answer: `laneward crew answer ${c.file} --lane lane-1 --reply REPLY --by NAME --state ${c.state}` });
    const page = renderLanePage(story);
    expect(page).toContain(`<p id="owner">waiting for the owner; brief: <code id="brief">${join(c.dir, 'runs', 'lane-1', 'brief.md')}</code></p>`);
    expect(page).toContain(`<code id="answer">laneward crew answer ${c.file} --lane lane-1 --reply REPLY --by NAME --state ${c.state}</code>`);
    const answered = laneward(['crew', 'answer', c.file, '--lane', 'lane-1', '--reply', 'as-is', '--by', 'alice', '--state', c.state], { cwd: c.dir });
    expect(answered.code).toBe(0);
    expect(lines(answered.stdout, 'CREW_ANSWERED: ')).toEqual([expect.stringMatching(/^CREW_ANSWERED: lane=lane-1 status=answered gate_rev=1 state=\S+ by=human:alice$/)]);
    expect(lines(answered.stdout, 'CREW_ANSWER_SUMMARY: ')).toEqual(['CREW_ANSWER_SUMMARY: lanes=1 answered=1 not_waiting=0 failed=0']);
    // Recorded as the owner's, by name, the words as given.
    const gate = JSON.parse(laneward(['crew', 'status', c.file, '--state', c.state, '--lane', 'lane-1', '--json'], { cwd: c.dir }).stdout).review.gate;
    expect(gate).toMatchObject({ rev: 1, state: 'answered', answer: 'as-is', by: 'human:alice' });
    // Answering it again: its gate no longer waits.
    const again = laneward(['crew', 'answer', c.file, '--lane', 'lane-1', '--reply', 'as-is', '--by', 'alice', '--state', c.state], { cwd: c.dir });
    expect(again.code).toBe(3);
    expect(lines(again.stdout, 'CREW_ANSWERED: ')[0]).toMatch(/^CREW_ANSWERED: lane=lane-1 status=not_waiting gate_rev=1 .* code=GATE_REV_STALE /);

    const second = laneward(['crew', 'run', c.file, '--state', c.state], { cwd: c.dir });
    expect(second.code).toBe(3);
    // The answered lane goes on; the one still waiting ends the run's lines, once.
    expect(lines(second.stdout, 'CREW_LANE: ').map((l) => [field(l, 'lane'), field(l, 'status')])).toEqual([
      ['lane-1', 'complete'],
      ['lane-2', 'waiting'],
    ]);
    expect(lines(second.stdout, 'CREW_SUMMARY: ')[0]).toMatch(/ complete=1 failed=0 interrupted=0 waiting=1 /);

    const all = laneward(['crew', 'answer', c.file, '--all', '--reply', 'as-is', '--by', 'bob', '--state', c.state], { cwd: c.dir });
    expect(all.code).toBe(0);
    expect(lines(all.stdout, 'CREW_ANSWERED: ').map((l) => field(l, 'lane'))).toEqual(['lane-2']);
    const third = laneward(['crew', 'run', c.file, '--state', c.state], { cwd: c.dir });
    expect(third.code).toBe(0);
    expect(lines(third.stdout, 'CREW_SUMMARY: ')[0]).toMatch(/^CREW_SUMMARY: lanes=2 complete=2 failed=0 interrupted=0 attempts=/);
    expect(lines(third.stdout, 'CREW_ANSWER: ')).toEqual([]);
    for (const lane of ['lane-1', 'lane-2']) expect(laneward(['artifact', 'validate', join(c.dir, 'runs', lane)]).code).toBe(0);
    // The exported decisions carry the owner's answer: answered_role human, answered_by by name, the reply as given.
    for (const [lane, name] of [['lane-1', 'alice'], ['lane-2', 'bob']] as const) {
      const rows = decisions(c.dir, lane).filter((r) => r.status !== 'pending');
      expect(rows.length).toBeGreaterThan(0);
      for (const row of rows) expect(row).toMatchObject({ answered_role: 'human', answered_by: `human:${name}`, reply: 'as-is' });
    }
  }, 180_000);

  it('should let a running crew take an answer given from another shell at once, and complete every lane', async () => {
    const c = ownerCrew(3);
    const child = spawn(process.execPath, [BUNDLE, 'crew', 'run', c.file, '--state', c.state, '--owner-wait', '2m'], { cwd: c.dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    const exited = exitOf(child).then(({ code }) => code);
    try {
      // Every lane reaches its gate and waits; nothing ends while the crew waits for its owner.
      await until(() => ['lane-1', 'lane-2', 'lane-3'].every((lane) => existsSync(join(c.dir, 'runs', lane, 'brief.md'))), 60_000, 'every lane at its gate');
      const one = laneward(['crew', 'answer', c.file, '--lane', 'lane-2', '--reply', 'as-is', '--by', 'alice', '--state', c.state], { cwd: c.dir });
      expect(one.code).toBe(0);
      await until(() => lines(stdout, 'CREW_LANE: lane=lane-2 ').length === 1, 60_000, 'lane-2 to complete');
      expect(lines(stdout, 'CREW_LANE: lane=lane-2 ')[0]).toMatch(/ status=complete /);
      expect(lines(stdout, 'CREW_LANE: ')).toHaveLength(1);
      const rest = laneward(['crew', 'answer', c.file, '--all', '--reply', 'as-is', '--by', 'alice', '--state', c.state], { cwd: c.dir });
      expect(rest.code).toBe(0);
      expect(lines(rest.stdout, 'CREW_ANSWERED: ').map((l) => field(l, 'lane'))).toEqual(['lane-1', 'lane-3']);
      expect(await exited).toBe(0);
      expect(lines(stdout, 'CREW_SUMMARY: ')[0]).toMatch(/^CREW_SUMMARY: lanes=3 complete=3 failed=0 interrupted=0 attempts=/);
    } finally {
      // A crew still running (a failed expectation) is stopped as a user would: it tears its children down.
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    }
  }, 180_000);

  it('should keep an owner\'s answer when the crew later runs under a standing policy, which answers only the gates still pending, as the crew\'s own', () => {
    const c = ownerCrew(2);
    expect(laneward(['crew', 'run', c.file, '--state', c.state], { cwd: c.dir }).code).toBe(3);
    expect(laneward(['crew', 'answer', c.file, '--lane', 'lane-1', '--reply', 'as-is', '--by', 'alice', '--state', c.state], { cwd: c.dir }).code).toBe(0);
    const value = JSON.parse(readFileSync(c.file, 'utf8'));
    value.answer = 'rec';
    writeFileSync(c.file, JSON.stringify(value));
    const run = laneward(['crew', 'run', c.file, '--state', c.state], { cwd: c.dir });
    expect(run.code).toBe(1);
    // lane-1 goes on under alice's answer; lane-2's gate, still pending, is the crew's to answer: rec accepts the plan changes.
    expect(field(lines(run.stdout, 'CREW_LANE: lane=lane-1 ')[0]!, 'status')).toBe('complete');
    expect(field(lines(run.stdout, 'CREW_LANE: lane=lane-2 ')[0]!, 'code')).toBe('PLAN_AMEND_PENDING');
    const gateOf = (lane: string) => JSON.parse(laneward(['crew', 'status', c.file, '--state', c.state, '--lane', lane, '--json'], { cwd: c.dir }).stdout).review.gate;
    expect(gateOf('lane-1')).toMatchObject({ answer: 'as-is', by: 'human:alice' });
    expect(gateOf('lane-2')).toMatchObject({ answer: 'rec', by: 'agent:laneward-crew' });
  }, 180_000);

  it('should refuse "answer": "owner" with --queue at load (CREW_INVALID naming the field), and a reply that does not parse before answering any lane', () => {
    const c = ownerCrew(1);
    const queued = laneward(['crew', 'run', c.file, '--state', c.state, '--queue', 'redis://127.0.0.1:1', '--key', join(c.dir, 'keys', 'actions.key')], { cwd: c.dir });
    expect(queued.code).toBe(2);
    expect(queued.stderr).toMatch(/answer: "owner" is not supported with --queue .*\(CREW_INVALID\)$/m);
    const bad = laneward(['crew', 'answer', c.file, '--all', '--reply', '9z nonsense', '--by', 'alice', '--state', c.state], { cwd: c.dir });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/\(GATE_REPLY_UNPARSED\)$/m);
  });
});

describe('driveParked: lanes parked for their owner', () => {
  const progress = (lane: string, parked: boolean) => ({ lane, parked }) as unknown as LaneProgress & { parked: boolean };
  it('should give a parked lane\'s turn to the next lane, drive it again once answered, and end a lane still parked once, last', async () => {
    const order: string[] = [];
    const drives = new Map<number, number>();
    let answered = false;
    const ended: string[] = [];
    const lanes = await driveParked(3, { lanesAtOnce: 1, ownerWaitMs: 0, cancel: new AbortController().signal }, {
      drive: async (index) => {
        const n = (drives.get(index) ?? 0) + 1;
        drives.set(index, n);
        order.push(`${index}:${n}`);
        // Lane 0 parks on its first drive; lane 2 parks and is never answered; lane 1 answers lane 0's gate as it runs.
        if (index === 1) answered = true;
        return progress(`lane-${index}`, (index === 0 && n === 1) || index === 2);
      },
      parked: (p) => (p as unknown as { parked: boolean }).parked,
      decided: (p) => p.lane === 'lane-0' && answered,
      ended: (p) => ended.push(p.lane),
    });
    expect(order).toEqual(['0:1', '1:1', '2:1', '0:2']);
    expect(ended).toEqual(['lane-1', 'lane-0', 'lane-2']);
    expect(lanes.map((l) => l.lane)).toEqual(['lane-0', 'lane-1', 'lane-2']);
  });

  it('should wait --owner-wait for an answer once only parked lanes are left, and end them when none comes', async () => {
    const started = performance.now();
    const ended: string[] = [];
    await driveParked(1, { lanesAtOnce: 1, ownerWaitMs: 600, cancel: new AbortController().signal }, {
      drive: async () => progress('lane-0', true),
      parked: () => true,
      decided: () => false,
      ended: (p) => ended.push(p.lane),
    });
    expect(performance.now() - started).toBeGreaterThanOrEqual(600);
    expect(ended).toEqual(['lane-0']);
  });
});
