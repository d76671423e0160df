import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { crewReply, fakeServerRunner } from '../fixtures/model-server/crew-script.ts';
import { startModelServer, type ModelServer, type Reply } from '../fixtures/model-server/index.ts';
import { ensureBuilt } from './helpers/cli.ts';
import { lanewardAsync, presetActions } from './helpers/real-crew.ts';

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
