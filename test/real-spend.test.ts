import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { crewReply, crewScript, fakeServerRunner } from '../fixtures/model-server/crew-script.ts';
import { startModelServer, type ModelServer, type Reply } from '../fixtures/model-server/index.ts';
import { ensureBuilt } from './helpers/cli.ts';
import { gitRepo, laneLines, lanewardAsync, presetActions, realCrew } from './helpers/real-crew.ts';

// What real CLIs' streams say a call cost is what the review run's ledger holds; a spend
// cap refuses a phase before any of its calls reaches the model.

let root: string;
let server: ModelServer;
beforeAll(async () => {
  ensureBuilt();
  root = mkdtempSync(join(tmpdir(), 'laneward-real-spend-'));
  server = await startModelServer((r) => crewReply(r));
});
afterAll(async () => {
  await server?.close();
  rmSync(root, { recursive: true, force: true });
});

/** Every reply reports this usage: claude prices it at $3/$15 per million on claude-sonnet-4-5. */
function withUsage(inputTokens: number, outputTokens: number) {
  return (r: Parameters<typeof crewReply>[0]): Reply => {
    const reply = crewReply(r);
    return reply.kind === 'message' ? { ...reply, options: { ...reply.options, usage: { inputTokens, outputTokens } } } : reply;
  };
}

function planRunArgs(dir: string, extra: readonly string[]): string[] {
  mkdirSync(dir, { recursive: true });
  const actions = presetActions(dir);
  writeFileSync(join(dir, 'plan.md'), '# Plan\n\n## Implementation plan\n\n1. Add the cache.\n\n## Review record\n\nNothing yet.\n');
  writeFileSync(join(dir, 'prices.json'), JSON.stringify({ 'gpt-5.5': { input: 1, output: 10 } }));
  const native = { ...fakeServerRunner('claude-code', server.url, join(dir, 'homes', 'native')), model: 'claude-sonnet-4-5' };
  const outside = { ...fakeServerRunner('codex', server.url, join(dir, 'homes', 'outside')), model: 'gpt-5.5' };
  return [
    'plan', 'run', '--out', join(dir, 'run'), '--plan', join(dir, 'plan.md'),
    '--native', JSON.stringify(native), '--outside', JSON.stringify(outside),
    '--prices', join(dir, 'prices.json'), '--actions', actions.file, '--trust', actions.trust, '--action', 'review',
    '--timeout-ms', '30000', '--state', join(dir, 'state'), ...extra,
  ];
}

const outcomes = (stdout: string) => stdout.split('\n').filter((l) => l.startsWith('OUTCOME: '));
const field = (line: string, key: string) => new RegExp(`\\b${key}=(\\S+)`).exec(line)?.[1];

describe('real CLIs: spend', () => {
  test("each voice's cost is its stream's figure (claude's total_cost_usd, codex's tokens at the prices), and the ledger is their sum", async () => {
    // 100,000 tokens in and 10,000 out per reply: claude $0.30 + $0.15, codex $0.10 + $0.10.
    server.setScript(withUsage(100_000, 10_000));
    const ran = await lanewardAsync(planRunArgs(join(root, 'costs'), []), { cwd: root, timeoutMs: 240_000 }).done;
    expect(ran.code, ran.stdout + ran.stderr).toBe(0);
    const lines = outcomes(ran.stdout);
    expect(lines.length).toBeGreaterThanOrEqual(2);
    for (const line of lines) {
      expect(field(line, 'status'), line).toBe('ok');
      expect(Number(field(line, 'cost_usd')), line).toBeCloseTo(field(line, 'voice') === 'native' ? 0.45 : 0.2, 10);
      expect(field(line, 'tokens'), line).toBe('100000/10000');
      expect(field(line, 'session'), line).toMatch(/^[0-9a-f-]{36}$/);
    }
    const phases = lines.length / 2;
    const spend = ran.stdout.split('\n').reverse().find((l) => l.startsWith('SPEND: '));
    expect(spend).toBe(`SPEND: spent=${(phases * 0.65).toFixed(2)} reserved=0.00 unknown=0(0.00) worst_case=${(phases * 0.65).toFixed(2)} cap=none`);
  }, 300_000);

  test('a spend cap refuses the next phase once the first spent it: SPEND_CAP_EXCEEDED, no further request reaches the model', async () => {
    // $2.25 (claude: 500,000 in, 50,000 out) + $1.00 (codex) in the first phase; the next
    // phase's two $2 reservations would pass the $5 cap.
    server.setScript(withUsage(500_000, 50_000));
    const from = server.requests.length;
    const ran = await lanewardAsync(planRunArgs(join(root, 'cap'), ['--spend-cap', '5']), { cwd: root, timeoutMs: 240_000 }).done;
    expect(ran.code, ran.stdout + ran.stderr).toBe(3);
    expect(ran.stderr).toMatch(/\(SPEND_CAP_EXCEEDED\)$/m);
    const lines = outcomes(ran.stdout);
    expect(lines.map((l) => `${field(l, 'voice')} ${Number(field(l, 'cost_usd')).toFixed(6)}`).sort(), lines.join('\n')).toEqual(['native 2.250000', 'outside 1.000000']);
    // One request per voice of the first phase; nothing after the refusal.
    expect(server.requests.slice(from).filter((r) => r.model !== undefined).length).toBe(2);
  }, 300_000);
});

/** What the model server bills per model call: its fixed usage (1000 in, 50 out) at each model's price per million. */
const BILL_PER_MILLION: Readonly<Record<string, { input: number; output: number }>> = {
  // claude's own price for the model, which its stream's total_cost_usd is computed from.
  'claude-sonnet-4-5': { input: 3, output: 15 },
  'gpt-5.5': { input: 1, output: 10 },
  'gemini-2.5-pro': { input: 2, output: 8 },
  'gemini-2.5-flash': { input: 2, output: 8 },
};

describe('real CLIs: a mixed crew, every call charged', () => {
  test("each lane's cost is what the model server billed for its requests (claude and codex reviewers, a claude observer, codex, gemini and claude agents), under a $5 cap", async () => {
    server.setScript(crewScript({ doneAt: 2 }));
    const dir = join(root, 'crew');
    mkdirSync(dir, { recursive: true });
    const repo = gitRepo(join(dir, 'repo'));
    const agents = ['codex', 'gemini-cli', 'claude-code'] as const;
    const crew = realCrew(dir, server.url, {
      crew: 'spend',
      lanes: 3,
      roles: { native: 'claude-code', outside: 'codex', observer: 'claude-code', agent: 'codex' },
      agentFor: (i) => agents[i]!,
      workspace: repo,
      prices: { 'gemini-2.5-pro': BILL_PER_MILLION['gemini-2.5-pro']!, 'gemini-2.5-flash': BILL_PER_MILLION['gemini-2.5-flash']! },
      // Four lanes of real calls failed this cap at about $0.01 when every unpriced call held $2.
      limits: { spend_cap_usd: 5 },
    });
    const from = server.requests.length;
    const ran = await lanewardAsync(['crew', 'run', crew.file, '--state', crew.state, '--report', join(dir, 'report.json')], { cwd: dir, timeoutMs: 280_000 }).done;
    const lanes = laneLines(ran.stdout).sort((a, b) => a['lane']!.localeCompare(b['lane']!));
    expect(lanes.map((l) => `${l['lane']} ${l['status']}`), ran.stdout + ran.stderr).toEqual(['lane-1 complete', 'lane-2 complete', 'lane-3 complete']);
    // Every model call is one lane's: its plan, its turn or its observer prompt names the lane.
    const billed: Record<string, number> = {};
    for (const request of server.requests.slice(from)) {
      if (request.model === undefined) continue;
      const named = new Set(JSON.stringify(request.body).match(/\blane-\d+\b/g) ?? []);
      expect([...named], JSON.stringify(request.model.allUserText).slice(0, 400)).toHaveLength(1);
      const price = BILL_PER_MILLION[request.model.model];
      expect(price, request.model.model).toBeDefined();
      const lane = [...named][0]!;
      billed[lane] = (billed[lane] ?? 0) + (1000 * price!.input + 50 * price!.output) / 1e6;
    }
    for (const lane of lanes) {
      expect(Number(lane['cost_usd']), `${lane['lane']}: ${JSON.stringify(billed)}`).toBeCloseTo(billed[lane['lane']!] ?? -1, 6);
      expect(lane['unpriced']).toBe('0');
    }
    // Reviewers and observers are charged, not only the agents.
    const report = JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as { lanes: { lane: string; review_usd: number; observer_usd: number; agent_usd: number; cost_usd: number }[] };
    // The figures, for whoever reads the run: each lane's charge beside the server's bill.
    for (const lane of report.lanes) process.stdout.write(`real-spend ${lane.lane}: cost_usd=${lane.cost_usd.toFixed(6)} billed=${(billed[lane.lane] ?? 0).toFixed(6)} review=${lane.review_usd.toFixed(6)} observer=${lane.observer_usd.toFixed(6)} agent=${lane.agent_usd.toFixed(6)}\n`);
    for (const lane of report.lanes) {
      expect(lane.review_usd, lane.lane).toBeGreaterThan(0);
      expect(lane.observer_usd, lane.lane).toBeGreaterThan(0);
      expect(lane.agent_usd, lane.lane).toBeGreaterThan(0);
      expect(lane.cost_usd).toBeCloseTo(lane.review_usd + lane.observer_usd + lane.agent_usd, 8);
    }
    const status = await lanewardAsync(['crew', 'status', crew.file, '--state', crew.state], { cwd: dir, timeoutMs: 60_000 }).done;
    const total = Object.values(billed).reduce((a, b) => a + b, 0);
    expect(status.stdout.split('\n')[0]).toMatch(new RegExp(` spend_usd=${total.toFixed(6).replace('.', '\\.')} cap_usd=5\\.00 unpriced=0$`));
  }, 300_000);
});
