import { lstatSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { ProviderFacts } from '../formats/providers/facts.ts';
import { PRESETS, type PresetCall } from '../formats/providers/presets.ts';
import { costOf } from '../main/providers/cost.ts';
import { DEFAULT_RETRY_AFTER_S, RateLimitPause } from '../main/providers/rate-limit-pause.ts';
import { jsonFromReply, launchOf, settleResult } from '../main/providers/launch.ts';
import { buildOutcome, type Outcome, type OutcomeCode } from '../workers/supervise/outcome.ts';
import { tempRoot } from './helpers/tmp.ts';

const FACTS: ProviderFacts = { sessionId: null, finalText: null, finalTextCut: false, usage: null, costUsd: null, rateLimit: null, apiError: null, finished: false };
const facts = (over: Partial<ProviderFacts>): ProviderFacts => ({ ...FACTS, ...over });

describe('costOf', () => {
  const prices = { m: { input: 3, output: 15, cached_input: 0.3 }, plain: { input: 1, output: 2 } };

  test('should be null without facts, or without usage or a price', () => {
    expect(costOf(null, 'm', prices)).toBeNull();
    expect(costOf(facts({}), 'm', prices)).toBeNull();
    const usage = { input: 10, output: 1, cachedInput: 0 };
    expect(costOf(facts({ usage }), null, prices)).toBeNull();
    expect(costOf(facts({ usage }), 'm', undefined)).toBeNull();
    expect(costOf(facts({ usage }), 'unknown', prices)).toBeNull();
  });

  test('should take the provider figure first, even 0', () => {
    expect(costOf(facts({ costUsd: 0.42, usage: { input: 1e6, output: 1e6, cachedInput: 0 } }), 'm', prices)).toBe(0.42);
    expect(costOf(facts({ costUsd: 0 }), null, undefined)).toBe(0);
  });

  test('should price tokens per million, cached input at its own price', () => {
    expect(costOf(facts({ usage: { input: 1_000_000, output: 1_000_000, cachedInput: 0 } }), 'm', prices)).toBe(18);
    expect(costOf(facts({ usage: { input: 1_000_000, output: 0, cachedInput: 500_000 } }), 'm', prices)).toBe(1.65);
    // No cached price: cached input at the input price.
    expect(costOf(facts({ usage: { input: 1_000_000, output: 500_000, cachedInput: 400_000 } }), 'plain', prices)).toBe(2);
    // Cached input counts at most the input.
    expect(costOf(facts({ usage: { input: 100, output: 0, cachedInput: 10_000 } }), 'm', prices)).toBe(0.00003);
  });

  test('should round to 1e-8 USD', () => {
    expect(costOf(facts({ usage: { input: 1, output: 0, cachedInput: 0 } }), 'plain', prices)).toBe(0.000001);
    expect(costOf(facts({ usage: { input: 0, output: 1, cachedInput: 1 } }), 'm', { m: { input: 0.0033, output: 0.0011 } })).toBe(0);
  });

  test('should not take inherited names for models', () => {
    const usage = { input: 10, output: 10, cachedInput: 0 };
    for (const model of ['__proto__', 'constructor', 'toString', 'hasOwnProperty']) expect(costOf(facts({ usage }), model, prices)).toBeNull();
  });
});

function outcome(code: OutcomeCode | null, retryAfterS: number | null = null, providerStarted = true): Outcome {
  return buildOutcome({
    code,
    action: 'a',
    timeoutMode: 'admitted_progress_inactivity',
    descriptorSha256: null,
    childExitCode: code === null ? 0 : 1,
    signal: null,
    cancelSignal: null,
    spawnError: null,
    deniedTool: null,
    providerStarted,
    attempts: providerStarted ? 1 : 0,
    marks: 0,
    durationMs: 1,
    cleanupConfirmed: true,
    expiryLateMs: null,
    firstSignalMs: null,
    goneMs: null,
    provider: code === 'PROVIDER_RATE_LIMITED' ? facts({ rateLimit: { status: 429, retryAfterS, message: '429' } }) : null,
  });
}

/** Whether `promise` settled within a few loop turns, and to what. */
async function settled<T>(promise: Promise<T>): Promise<{ done: boolean; value?: T }> {
  let state: { done: boolean; value?: T } = { done: false };
  void promise.then((value) => (state = { done: true, value }));
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  return state;
}

describe('RateLimitPause', () => {
  test('should hold a call admitted before a rate limit, still waiting for its slot, until the pause ends', async () => {
    let now = 5_000_000;
    const pause = new RateLimitPause(() => now);
    expect(await pause.admit('codex')).toBe(true);
    expect(await pause.admit('codex')).toBe(true);
    // Open before any limit: starts at once.
    expect(await settled(pause.beforeStart('codex'))).toEqual({ done: true, value: true });
    pause.ended('codex', outcome('PROVIDER_RATE_LIMITED', 0.2));
    const waiting = pause.beforeStart('codex');
    expect((await settled(waiting)).done).toBe(false);
    now += 200;
    // Its timer runs on the real clock: it looks again when it fires and finds the pause over.
    expect(await waiting).toBe(true);
    // Cancelled while it waits: false, and nothing starts.
    pause.ended('codex', outcome('PROVIDER_RATE_LIMITED', 30));
    const stop = new AbortController();
    const cancelled = pause.beforeStart('codex', stop.signal);
    stop.abort();
    expect(await cancelled).toBe(false);
  });

  test('should admit at once while no provider was rate limited, and show nothing', async () => {
    const pause = new RateLimitPause(() => 0);
    const all = await Promise.all(Array.from({ length: 100 }, () => pause.admit('claude-code')));
    expect(all.every(Boolean)).toBe(true);
    pause.ended('claude-code', outcome(null));
    expect(pause.view()).toEqual([]);
  });

  test('should pause only the rate-limited provider until its retry-after, then admit one at a time, then double', async () => {
    let now = 1_000_000;
    const pause = new RateLimitPause(() => now);
    const stop = new AbortController();
    expect(await pause.admit('claude-code')).toBe(true);
    expect(await pause.admit('claude-code')).toBe(true);
    pause.ended('claude-code', outcome('PROVIDER_RATE_LIMITED', 10));
    expect(pause.view()).toEqual([{ provider: 'claude-code', pausedUntil: new Date(now + 10_000).toISOString(), allowance: 1, running: 1, rateLimits: 1 }]);

    // Paused: a new call waits; other providers do not.
    const waiting = pause.admit('claude-code', stop.signal);
    expect((await settled(waiting)).done).toBe(false);
    expect(await pause.admit('codex')).toBe(true);
    expect(await pause.admit('gemini-cli')).toBe(true);

    // A clean end during the pause does not double the allowance.
    now += 5_000;
    pause.ended('claude-code', outcome(null));
    expect((await settled(waiting)).done).toBe(false);
    expect(pause.view()[0]).toMatchObject({ allowance: 1, running: 0 });

    // After the pause: one at a time.
    now += 5_000;
    expect(await settled(pause.admit('claude-code', stop.signal))).toEqual({ done: true, value: true });
    const second = pause.admit('claude-code', stop.signal);
    expect((await settled(second)).done).toBe(false);
    expect(pause.view()[0]).toMatchObject({ pausedUntil: null, allowance: 1, running: 1 });

    // A clean end doubles the allowance: two may run.
    pause.ended('claude-code', outcome(null));
    const results = await Promise.all([settled(waiting), settled(second)]);
    expect(results.map((r) => r.done)).toEqual([true, true]);
    expect(pause.view()[0]).toMatchObject({ allowance: 2, running: 2 });
    const third = pause.admit('claude-code', stop.signal);
    expect((await settled(third)).done).toBe(false);

    // A call that never started does not double it.
    pause.ended('claude-code', outcome('COMMAND_NOT_FOUND', null, false));
    expect(await settled(third)).toEqual({ done: true, value: true });
    expect(pause.view()[0]).toMatchObject({ allowance: 2, running: 2 });
    stop.abort();
  });

  test('should double up to 64 and then stop holding the provider back', async () => {
    let now = 0;
    const pause = new RateLimitPause(() => now);
    await pause.admit('codex');
    pause.ended('codex', outcome('PROVIDER_RATE_LIMITED', 1));
    now = 1_000;
    const seen: (number | null)[] = [];
    for (let i = 0; i < 8; i++) {
      expect(await pause.admit('codex')).toBe(true);
      pause.ended('codex', outcome(null));
      seen.push(pause.view()[0]!.allowance);
    }
    expect(seen).toEqual([2, 4, 8, 16, 32, 64, null, null]);
    const many = await Promise.all(Array.from({ length: 200 }, () => pause.admit('codex')));
    expect(many.every(Boolean)).toBe(true);
  });

  test('should pause for the default when the rate limit named no retry-after, and extend, never shorten, a pause', async () => {
    let now = 0;
    const pause = new RateLimitPause(() => now);
    await pause.admit('gemini-cli');
    await pause.admit('gemini-cli');
    pause.ended('gemini-cli', outcome('PROVIDER_RATE_LIMITED', null));
    expect(pause.view()[0]!.pausedUntil).toBe(new Date(DEFAULT_RETRY_AFTER_S * 1000).toISOString());
    pause.ended('gemini-cli', outcome('PROVIDER_RATE_LIMITED', 1));
    expect(pause.view()[0]).toMatchObject({ pausedUntil: new Date(DEFAULT_RETRY_AFTER_S * 1000).toISOString(), rateLimits: 2, running: 0 });
  });

  test('should stay usable after a retry-after no timer or date can hold', async () => {
    const pause = new RateLimitPause();
    await pause.admit('claude-code');
    pause.ended('claude-code', outcome('PROVIDER_RATE_LIMITED', Infinity));
    expect(() => pause.view()).not.toThrow();
    const stop = new AbortController();
    const waiting = pause.admit('claude-code', stop.signal);
    expect((await settled(waiting)).done).toBe(false);
    stop.abort();
    expect(await waiting).toBe(false);
  });

  test('should wake a waiter with a real timer once the pause ends', async () => {
    const pause = new RateLimitPause();
    await pause.admit('codex');
    const t0 = Date.now();
    pause.ended('codex', outcome('PROVIDER_RATE_LIMITED', 0.3));
    expect(await pause.admit('codex')).toBe(true);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    expect(Date.now() - t0).toBeLessThan(10_000);
  });

  test('should return false for a call aborted while it waits, and not count it', async () => {
    const pause = new RateLimitPause();
    await pause.admit('claude-code');
    pause.ended('claude-code', outcome('PROVIDER_RATE_LIMITED', 3_600));
    const stop = new AbortController();
    const waiting = pause.admit('claude-code', stop.signal);
    setTimeout(() => stop.abort(), 50);
    expect(await waiting).toBe(false);
    expect(pause.view()[0]).toMatchObject({ running: 0 });
    // Already aborted: false at once.
    expect(await pause.admit('claude-code', stop.signal)).toBe(false);
    expect(await pause.admit('codex', stop.signal)).toBe(false);
    expect(pause.view()[0]).toMatchObject({ running: 0 });
  });
});

const call = (role: PresetCall['role'], resume: string | null = null, allow: PresetCall['allow'] = null): PresetCall => ({ role, model: 'M', resume, allow });
const READ_TOOLS = 'Read,Glob,Grep,LS,NotebookRead,WebSearch,WebFetch';
const WRITE_TOOLS = 'Bash,BashOutput,KillShell,KillBash,Edit,MultiEdit,Write,NotebookEdit';
const ALL_TOOLS = 'Read,Glob,Grep,LS,NotebookRead,WebSearch,WebFetch,Bash,BashOutput,KillShell,KillBash,Edit,MultiEdit,Write,NotebookEdit';
const CLAUDE_HEAD = ['-p', '--output-format', 'stream-json', '--verbose', '--include-partial-messages', '--model', 'M'];

describe('presets', () => {
  test('should pin claude-code argv for each role and resume', () => {
    const claude = PRESETS['claude-code'];
    expect(claude).toMatchObject({ binary: 'claude', tracker: 'claude-stream-json', toolEvents: 'claude-stream-json', keyVariable: 'ANTHROPIC_API_KEY' });
    const readOnly = [...CLAUDE_HEAD, '--permission-mode', 'default', '--allowedTools', READ_TOOLS, '--disallowedTools', WRITE_TOOLS];
    expect(claude.args(call('reviewer'))).toEqual(readOnly);
    expect(claude.args(call('observer'))).toEqual(readOnly);
    expect(claude.args(call('agent'))).toEqual([...CLAUDE_HEAD, '--permission-mode', 'acceptEdits', '--allowedTools', ALL_TOOLS]);
    expect(claude.args(call('agent', 'sess-1'))).toEqual([...CLAUDE_HEAD, '--resume', 'sess-1', '--permission-mode', 'acceptEdits', '--allowedTools', ALL_TOOLS]);
    expect(claude.args(call('observer', null, ['read']))).toEqual([
      ...CLAUDE_HEAD,
      '--permission-mode',
      'default',
      '--allowedTools',
      'Read,Glob,Grep,LS,NotebookRead',
      '--disallowedTools',
      `WebSearch,WebFetch,${WRITE_TOOLS}`,
    ]);
    expect(claude.args(call('observer', null, []))).toEqual([...CLAUDE_HEAD, '--permission-mode', 'default', '--disallowedTools', ALL_TOOLS]);
  });

  test('should pin codex argv for each role and resume', () => {
    const codex = PRESETS.codex;
    expect(codex).toMatchObject({ binary: 'codex', tracker: 'codex-json', toolEvents: 'codex-json', keyVariable: 'OPENAI_API_KEY' });
    const common = (sandbox: string) => ['--json', '--skip-git-repo-check', '-m', 'M', '-c', `sandbox_mode="${sandbox}"`, '-c', 'approval_policy="never"'];
    expect(codex.args(call('reviewer'))).toEqual(['exec', ...common('read-only'), '-']);
    expect(codex.args(call('observer'))).toEqual(['exec', ...common('read-only'), '-']);
    expect(codex.args(call('agent'))).toEqual(['exec', ...common('workspace-write'), '-']);
    expect(codex.args(call('agent', 'th-1'))).toEqual(['exec', 'resume', ...common('workspace-write'), 'th-1', '-']);
    expect(codex.args(call('observer', null, ['read', 'shell']))).toEqual(['exec', ...common('workspace-write'), '-']);
    // Inside laneward's sandbox codex's own is off: nested, its bwrap fails every command.
    expect(codex.args({ ...call('agent'), contained: true })).toEqual(['exec', ...common('danger-full-access'), '-']);
    expect(codex.args({ ...call('agent', 'th-1'), contained: true })).toEqual(['exec', 'resume', ...common('danger-full-access'), 'th-1', '-']);
  });

  test('should pin gemini-cli argv for each role and resume', () => {
    const gemini = PRESETS['gemini-cli'];
    expect(gemini).toMatchObject({ binary: 'gemini', tracker: 'gemini-stream-json', toolEvents: null, keyVariable: 'GEMINI_API_KEY' });
    const head = ['--output-format', 'stream-json', '-m', 'M', '--skip-trust'];
    expect(gemini.args(call('reviewer'))).toEqual(head);
    expect(gemini.args(call('observer'))).toEqual(head);
    expect(gemini.args(call('agent'))).toEqual([...head, '--yolo']);
    expect(gemini.args(call('agent', 'g-1'))).toEqual([...head, '--yolo', '--resume', 'g-1']);
    expect(gemini.args(call('reviewer', 'g-2'))).toEqual([...head, '--resume', 'g-2']);
  });
});

describe('launchOf', () => {
  test('should fill an argv template inside each element, never through a shell', () => {
    const launch = launchOf(['tool', '--in={prompt}', '{result}', '{lane}-{lane}', '{other}', '$&{prompt}'], { role: 'reviewer', prompt: "/p/a b'$(x)$&", result: '/r', lane: 'L' });
    expect(launch).toEqual({ argv: ['tool', "--in=/p/a b'$(x)$&", '/r', 'L-L', '{other}', "$&/p/a b'$(x)$&"], env: {}, model: null });
    expect(launchOf(['t', '{lane}'], { role: 'agent', prompt: 'p', result: 'r' }).argv).toEqual(['t', '{lane}']);
  });

  test('should start a preset with its own argv, the runner args after, its env and the prompt on stdin', () => {
    const launch = launchOf({ preset: 'codex', model: 'o4', args: ['--extra'], env: { OPENAI_API_KEY: 'k' }, bin: '/opt/codex' }, { role: 'agent', prompt: '/tmp/prompt.md', result: '/tmp/r', resume: 'th-9' });
    expect(launch).toEqual({
      argv: ['/opt/codex', 'exec', 'resume', '--json', '--skip-git-repo-check', '-m', 'o4', '-c', 'sandbox_mode="workspace-write"', '-c', 'approval_policy="never"', 'th-9', '-', '--extra'],
      env: { OPENAI_API_KEY: 'k' },
      stdinFile: '/tmp/prompt.md',
      provider: 'codex',
      model: 'o4',
    });
    const plain = launchOf({ preset: 'gemini-cli' }, { role: 'reviewer', prompt: '/p', result: '/r' });
    expect(plain).toEqual({ argv: ['gemini', '--output-format', 'stream-json', '-m', 'gemini-2.5-pro', '--skip-trust'], env: { GEMINI_CLI_NO_RELAUNCH: '1' }, stdinFile: '/p', provider: 'gemini-cli', model: 'gemini-2.5-pro' });
    const observer = launchOf({ preset: 'claude-code' }, { role: 'observer', prompt: '/p', result: '/r', allow: ['read'] });
    expect(observer.argv.slice(0, 8)).toEqual(['claude', ...CLAUDE_HEAD.slice(0, 6), 'claude-sonnet-4-5']);
    expect(observer.argv).toContain('Read,Glob,Grep,LS,NotebookRead');
  });
});

describe('settleResult', () => {
  const root = tempRoot('provider-presets');
  let n = 0;
  const fresh = () => join(root, `result-${n++}.json`);

  test('should write the final text where the CLI wrote nothing, through the extractor', () => {
    const file = fresh();
    expect(settleResult(file, facts({ finalText: 'the text' }))).toBe('from-stream');
    expect(readFileSync(file, 'utf8')).toBe('the text');
    expect(lstatSync(file).mode & 0o777).toBe(0o600);
    const json = fresh();
    expect(settleResult(json, facts({ finalText: 'Here:\n```json\n{"a":1}\n```\n' }), jsonFromReply)).toBe('from-stream');
    expect(readFileSync(json, 'utf8')).toBe('{"a":1}\n');
  });

  test('should never overwrite a file the CLI made', () => {
    const file = fresh();
    writeFileSync(file, 'by the cli');
    expect(settleResult(file, facts({ finalText: 'stream' }))).toBe('written-by-provider');
    expect(readFileSync(file, 'utf8')).toBe('by the cli');
    const empty = fresh();
    writeFileSync(empty, '');
    expect(settleResult(empty, facts({ finalText: 'stream' }))).toBe('written-by-provider');
    expect(readFileSync(empty, 'utf8')).toBe('');
  });

  test('should never write through or over a symlink the CLI made, dangling or not', () => {
    const target = fresh();
    writeFileSync(target, 'target');
    const link = fresh();
    symlinkSync(target, link);
    expect(settleResult(link, facts({ finalText: 'stream' }))).toBe('written-by-provider');
    expect(readFileSync(target, 'utf8')).toBe('target');
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    const dangling = fresh();
    const nowhere = join(root, 'nowhere');
    symlinkSync(nowhere, dangling);
    expect(settleResult(dangling, facts({ finalText: 'stream' }))).toBe('written-by-provider');
    expect(readlinkSync(dangling)).toBe(nowhere);
    expect(lstatSync(nowhere, { throwIfNoEntry: false })).toBeUndefined();
  });

  test('should write nothing without a final text', () => {
    for (const f of [null, facts({}), facts({ finalText: '' }), facts({ finalText: ' \n\t' })]) {
      const file = fresh();
      expect(settleResult(file, f)).toBe('none');
      expect(lstatSync(file, { throwIfNoEntry: false })).toBeUndefined();
    }
  });
});

describe('jsonFromReply', () => {
  test.each([
    ['the last json fence', 'First:\n```json\n{"a":1}\n```\nThen:\n```json\n{"b":2}\n```\nDone.', '{"b":2}\n'],
    ['a bare fence', 'x\n```\n  {"c":3}  \n```', '{"c":3}\n'],
    ['a fence with spaces after its tag', '```json  \n[1]\n```', '[1]\n'],
    ['a multi-line document', '```json\n{\n  "d": [1,\n 2]\n}\n```', '{\n  "d": [1,\n 2]\n}\n'],
    ['the whole text when there is no fence', '  {"e":5}\n\n', '{"e":5}\n'],
    ['the whole text for an unclosed fence', '```json\n{"f":6}', '```json\n{"f":6}\n'],
  ])('should take %s', (_name, text, want) => {
    expect(jsonFromReply(text)).toBe(want);
  });
});
