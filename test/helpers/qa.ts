import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { laneward, ROOT, type CliResult } from './cli.ts';
import { signedActions, type SignedActions } from './actions.ts';

export const OBSERVERS = `${ROOT}fixtures/observers`;

/** One temp root with signed observer actions (claude-stream-json, codex-json, fd) and a tag for its processes. */
export interface QaCtx {
  readonly root: string;
  readonly state: string;
  readonly actions: SignedActions;
  /** LANEWARD_QA_TEST=<uuid>: every process a test starts carries it, so leftovers can be found. */
  readonly tag: string;
}

export function qaCtx(root: string): QaCtx {
  const actions = signedActions(root, {
    observe: { timeout_mode: 'admitted_progress_inactivity', progress: 'claude-stream-json', cleanup_reserve_ms: 0, post_provider_ms: 2000 },
    'observe.codex': { timeout_mode: 'admitted_progress_inactivity', progress: 'codex-json', cleanup_reserve_ms: 0, post_provider_ms: 2000 },
    'observe.fd': { timeout_mode: 'admitted_progress_inactivity', progress: 'fd', cleanup_reserve_ms: 0, post_provider_ms: 2000 },
    'observe.deadline': { timeout_mode: 'total_deadline', cleanup_reserve_ms: 0, post_provider_ms: 2000 },
  });
  return { root, state: join(root, 'state'), actions, tag: `LANEWARD_QA_TEST=${randomUUID()}` };
}

/** Runs `laneward qa ...` on the context's state root. */
export function qa(ctx: QaCtx, args: readonly string[], env: NodeJS.ProcessEnv = {}): CliResult {
  const [name, value] = ctx.tag.split('=') as [string, string];
  return laneward(['qa', ...args, '--state', ctx.state], { cwd: ctx.root, env: { [name]: value, ...env } });
}

/** `qa start` of `lane` with a fixture observer (`pass`, `fail`, ...) and its extra words. */
export function start(ctx: QaCtx, lane: string, observer: string, extra: string[] = [], options: { action?: string; timeoutMs?: number } = {}): CliResult {
  const template = ['node', `${OBSERVERS}/${observer}.mjs`, '{prompt}', '{result}', ...extra].join(' ');
  return qa(ctx, [
    'start', '--lane', lane, '--observer', template,
    '--actions', ctx.actions.file, '--trust', ctx.actions.trust, '--action', options.action ?? 'observe',
    '--timeout-ms', String(options.timeoutMs ?? 20_000),
  ]);
}

export function turn(ctx: QaCtx, lane: string, role: string, text: string, options: { diff?: boolean; env?: NodeJS.ProcessEnv } = {}): CliResult {
  return qa(ctx, ['turn', '--lane', lane, '--role', role, '--text', text, ...(options.diff ? ['--diff'] : [])], options.env);
}

/** The stdout lines that start with `prefix`. */
export function linesOf(result: CliResult, prefix: string): string[] {
  return result.stdout.split('\n').filter((line) => line.startsWith(prefix));
}

/** Every stdout line's prefix, in order. */
export function prefixes(result: CliResult): string[] {
  return result.stdout.split('\n').filter((line) => line !== '').map((line) => line.split(' ')[0]!);
}

/** `key=value` of a line (values without spaces, or the first word of a quoted one). */
export function field(line: string, key: string): string | undefined {
  return new RegExp(`(?:^| )${key}=(\\S+)`).exec(line)?.[1];
}

/** The observer's call log (--log FILE): one {mode, call, tools, prompt} per call. */
export function callLog(file: string): { mode: string; call: string; tools: string[]; prompt: string }[] {
  try {
    return readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as { mode: string; call: string; tools: string[]; prompt: string });
  } catch {
    return [];
  }
}

/** `qa status --json`'s status object. */
export function statusOf(ctx: QaCtx, lane: string): Record<string, unknown> & { frames: Record<string, number> } {
  const result = qa(ctx, ['status', '--lane', lane, '--json']);
  expect(result.code).toBe(0);
  return (JSON.parse(result.stdout) as { status: Record<string, unknown> & { frames: Record<string, number> } }).status;
}

export function writeText(file: string, text: string): string {
  writeFileSync(file, text);
  return file;
}
