import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, test } from 'vitest';
import { exitStatus } from '../formats/codes/exit-status.ts';
import { classifyTool, type ToolPolicy } from '../formats/supervision/tool-policy.ts';
import { nowMs } from '../workers/supervise/monotonic-timer.ts';
import { refusedOutcome } from '../workers/supervise/outcome.ts';
import type { SupervisionSpec } from '../workers/supervise/spec.ts';
import { supervise } from '../workers/supervise/supervise.ts';
import { ToolGuard, toolsNamed } from '../workers/supervise/tool-guard.ts';
import { killQuietly, settleTagged } from './helpers/procs.ts';
import { tempRoot } from './helpers/tmp.ts';

// The tool policy hook of the supervision engine: which tools a stdout line names, and a
// supervised provider that uses a tool outside its policy ends as TOOL_DENIED.

const root = tempRoot('tool-guard');
const TAG_VALUE = `${process.pid}-${Date.now()}`;
const TAG = `LANEWARD_TOOL_TEST=${TAG_VALUE}`;

afterEach(async () => {
  const leaked = await settleTagged(TAG, 3_000);
  for (const pid of leaked) killQuietly(pid);
  expect(leaked).toEqual([]);
});

const claudeTool = (id: string, name: string) => JSON.stringify({ type: 'assistant', message: { content: [{ type: 'tool_use', id, name, input: {} }] } });
const claudeResult = (id: string) => JSON.stringify({ type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: id }] } });
const codexItem = (type: string, kind: string) => JSON.stringify({ type, item: { id: 'i1', type: kind } });

describe('toolsNamed', () => {
  test.each([
    ['claude-stream-json', claudeTool('t1', 'Bash'), ['Bash']],
    ['claude-stream-json', JSON.stringify({ type: 'assistant', message: { content: [{ type: 'tool_use', id: 'a', name: 'Read' }, { type: 'text', text: 'x' }, { type: 'tool_use', id: 'b', name: 'WebSearch' }] } }), ['Read', 'WebSearch']],
    ['claude-stream-json', claudeResult('t1'), []],
    ['claude-stream-json', JSON.stringify({ type: 'assistant', message: { content: [{ type: 'text', text: 'I could use "tool_use" Bash' }] } }), []],
    ['claude-stream-json', 'prose mentioning "tool_use" and Bash', []],
    ['codex-json', codexItem('item.started', 'command_execution'), ['command_execution']],
    ['codex-json', codexItem('item.completed', 'web_search'), ['web_search']],
    ['codex-json', codexItem('item.completed', 'reasoning'), []],
    ['codex-json', codexItem('item.completed', 'agent_message'), []],
    ['codex-json', codexItem('item.updated', 'command_execution'), []],
  ] as const)('%s %s names %j', (format, line, names) => {
    expect(toolsNamed(format, line)).toEqual(names);
  });

  test.each([
    ['claude-stream-json', 'Read', 'read'],
    ['claude-stream-json', 'WebSearch', 'search'],
    ['claude-stream-json', 'Bash', 'shell'],
    ['claude-stream-json', 'Edit', 'write'],
    ['claude-stream-json', 'mcp__x__y', 'other'],
    ['claude-stream-json', 'constructor', 'other'],
    ['codex-json', 'command_execution', 'shell'],
    ['codex-json', 'web_search', 'search'],
    ['codex-json', 'file_change', 'write'],
    ['codex-json', 'mcp_tool_call', 'other'],
  ] as const)('classifies %s %s as %s', (format, name, kind) => {
    expect(classifyTool(format, name)).toBe(kind);
  });

  test('the guard returns the first denied tool, nothing for allowed ones', () => {
    const guard = new ToolGuard({ name: 'bootstrap', events: 'claude-stream-json', allow: ['read', 'search'] });
    expect(guard.check(claudeTool('a', 'Read'))).toBeUndefined();
    expect(guard.check(claudeTool('b', 'WebFetch'))).toBeUndefined();
    expect(guard.check(claudeTool('c', 'Write'))).toBe('Write');
    expect(guard.check(claudeTool('d', 'SomethingNew'))).toBe('SomethingNew');
  });
});

describe('supervise with a tool policy', () => {
  /** A provider printing `lines` 50 ms apart, then sleeping `tailMs`. */
  const printer = (lines: string[], tailMs: number): string[] => [
    process.execPath,
    '-e',
    `const l=${JSON.stringify(lines)};(async()=>{for(const x of l){process.stdout.write(x+'\\n');await new Promise(r=>setTimeout(r,50));}await new Promise(r=>setTimeout(r,${tailMs}));})()`,
  ];
  const spec = (argv: string[], policy: ToolPolicy | undefined, copy?: string): SupervisionSpec => ({
    argv,
    env: { LANEWARD_TOOL_TEST: TAG_VALUE },
    stdio: 'pipe',
    mode: 'admitted_progress_inactivity',
    progress: 'claude-stream-json',
    timeoutMs: 10_000,
    cleanupReserveMs: 0,
    postProviderMs: 3_000,
    graceMs: 500,
    teardownMs: 5_000,
    stdoutLimit: 1 << 20,
    stderrLimit: 1 << 20,
    startedAt: nowMs(),
    action: 'observe',
    descriptorSha256: null,
    ...(policy === undefined ? {} : { toolPolicy: policy }),
    ...(copy === undefined ? {} : { stdoutFile: copy }),
  });
  const policy: ToolPolicy = { name: 'cadence', events: 'claude-stream-json', allow: ['search'] };

  test('should end the call at the first denied tool, as a typed failure with the tool named', async () => {
    const outcome = await supervise(spec(printer([claudeTool('a', 'WebSearch'), claudeResult('a'), claudeTool('b', 'Bash'), claudeResult('b')], 30_000), policy));
    expect(outcome).toMatchObject({ status: 'failed', code: 'TOOL_DENIED', deniedTool: 'Bash', cleanupConfirmed: true, providerStarted: true, marks: 2 });
    expect(exitStatus(outcome.code)).toBe(1);
  });

  test('should let allowed tools through, and write stdout to stdoutFile', async () => {
    const copy = join(root, 'stdout.jsonl');
    const lines = [claudeTool('a', 'WebSearch'), claudeResult('a'), 'some prose'];
    const outcome = await supervise(spec(printer(lines, 0), policy, copy));
    expect(outcome).toMatchObject({ status: 'ok', code: null, deniedTool: null, marks: 2 });
    expect(readFileSync(copy, 'utf8')).toBe(`${lines.join('\n')}\n`);
  });

  test('should not check tools without a policy', async () => {
    const outcome = await supervise(spec(printer([claudeTool('b', 'Bash'), claudeResult('b')], 0), undefined));
    expect(outcome).toMatchObject({ status: 'ok', deniedTool: null });
  });

  test('should fail a stdoutFile that cannot be created before anything is spawned', async () => {
    const outcome = await supervise(spec(printer([], 0), policy, join(root, 'no-such-dir', 'copy')));
    expect(outcome).toMatchObject({ status: 'failed', code: 'SPAWN_FAILED', spawnError: 'ENOENT', providerStarted: false, attempts: 0 });
  });

  test('every outcome carries deniedTool, refusals included', () => {
    expect(refusedOutcome('DESCRIPTOR_INVALID', 'x', nowMs())).toHaveProperty('deniedTool', null);
  });
});
