import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { launchOf } from '../main/providers/launch.ts';
import { isLanewardError } from '../formats/codes/error.ts';
import { loadCrew } from '../main/crew/load-crew.ts';
import { tempRoot } from './helpers/tmp.ts';

const root = tempRoot('crew-file');
mkdirSync(join(root, 'plans'));
for (const n of ['1', '2', '3']) writeFileSync(join(root, 'plans', `${n}.md`), '# plan\n');

const base = {
  schema_version: 1,
  crew: 'c1',
  actions: { file: 'actions.json', trust: 'actions.pub', reviewer: 'review', observer: 'observe', agent: 'agent' },
  models: { native: 'claude-x', outside: 'gpt-y' },
  runners: { native: ['node', 'r.mjs', '{prompt}', '{result}'], outside: ['node', 'r.mjs', '{prompt}', '{result}'], observer: ['node', 'o.mjs'], agent: ['node', 'a.mjs'] },
};

let serial = 0;
function load(value: unknown, text?: string) {
  const file = join(root, `crew-${++serial}.json`);
  writeFileSync(file, text ?? JSON.stringify(value));
  try {
    return loadCrew(file, root);
  } catch (error) {
    if (isLanewardError(error)) return { code: error.code, message: error.message };
    throw error;
  }
}

describe('crew files', () => {
  it('should expand a count and a template into zero-padded lanes with paths relative to the file', () => {
    const crew = load({ ...base, count: 3, template: { id: 'lane-{n}', plan: 'plans/{n}.md', runners: { agent: ['node', 'slow.mjs', '{lane}'] } } });
    if (!('lanes' in crew)) throw new Error(crew.message);
    expect(crew.lanes.map((l) => l.id)).toEqual(['lane-1', 'lane-2', 'lane-3']);
    expect(crew.lanes[0]).toMatchObject({ id: 'lane-1', plan: join(root, 'plans', '1.md') });
    expect(crew.lanes[0]!.runners.agent).toEqual(['node', 'slow.mjs', '{lane}']);
    expect(crew.lanes[0]!.runners.native).toEqual(base.runners.native);
    expect(crew.out).toBe(join(root, 'runs'));
    expect(crew.crew.limits).toMatchObject({ concurrency: 8, agent_turns: 6, timeout_ms: 120_000 });
    // No cap by default; under one, a call holds $0.50 while it runs. A turn adds at most 10 MiB a file, 100 MiB in all.
    expect(crew.crew.limits).toMatchObject({ reserve_usd: 0.5, max_file_bytes: 10 * 1024 * 1024, max_turn_bytes: 100 * 1024 * 1024 });
    expect(crew.crew.limits.spend_cap_usd).toBeUndefined();
  });

  it('should pad lane numbers to the width of the count', () => {
    const crew = load({ ...base, count: 10, template: { id: 'l{n}', plan: 'plans/1.md' } });
    if (!('lanes' in crew)) throw new Error(crew.message);
    expect(crew.lanes.map((l) => l.id)).toEqual(['l01', 'l02', 'l03', 'l04', 'l05', 'l06', 'l07', 'l08', 'l09', 'l10']);
  });

  it.each([
    ['neither lanes nor count', { ...base }, 'Expected either "lanes" or "count"'],
    ['both lanes and count', { ...base, lanes: [{ id: 'a', plan: 'plans/1.md' }], count: 1, template: { id: 'x{n}', plan: 'plans/1.md' } }, 'Expected either'],
    ['count without template', { ...base, count: 2 }, 'Expected "count" and "template" together'],
    ['a lane id that is a path', { ...base, lanes: [{ id: '../x', plan: 'plans/1.md' }] }, 'lanes.0.id'],
    ['a duplicate lane', { ...base, lanes: [{ id: 'a', plan: 'plans/1.md' }, { id: 'a', plan: 'plans/2.md' }] }, 'named twice'],
    ['a missing plan', { ...base, lanes: [{ id: 'a', plan: 'plans/nope.md' }] }, 'is not a readable file'],
    ['an empty argv', { ...base, runners: { ...base.runners, agent: [] }, lanes: [{ id: 'a', plan: 'plans/1.md' }] }, 'runners.agent'],
    ['an unknown field', { ...base, lanez: [], lanes: [{ id: 'a', plan: 'plans/1.md' }] }, 'lanez'],
    ['a fractional concurrency', { ...base, limits: { concurrency: 1.5 }, lanes: [{ id: 'a', plan: 'plans/1.md' }] }, 'limits.concurrency'],
    ['a negative reservation', { ...base, limits: { reserve_usd: -1 }, lanes: [{ id: 'a', plan: 'plans/1.md' }] }, 'limits.reserve_usd'],
    ['a fractional file limit', { ...base, limits: { max_file_bytes: 1.5 }, lanes: [{ id: 'a', plan: 'plans/1.md' }] }, 'limits.max_file_bytes'],
    ['a zero turn limit', { ...base, limits: { max_turn_bytes: 0 }, lanes: [{ id: 'a', plan: 'plans/1.md' }] }, 'limits.max_turn_bytes'],
    ['another version', { ...base, schema_version: 2, lanes: [{ id: 'a', plan: 'plans/1.md' }] }, 'schema_version'],
    ['a template id without {n}', { ...base, count: 2, template: { id: 'same', plan: 'plans/1.md' } }, 'template.id'],
    ['an out that is a file', { ...base, out: 'plans/1.md', lanes: [{ id: 'a', plan: 'plans/1.md' }] }, 'exists and is not a directory'],
    ['a plan that is a directory', { ...base, lanes: [{ id: 'a', plan: 'plans' }] }, 'is not a readable file'],
  ])('should refuse %s with CREW_INVALID naming the place', (_what, value, message) => {
    const crew = load(value);
    expect(crew).toMatchObject({ code: 'CREW_INVALID' });
    expect((crew as { message: string }).message).toContain(message);
  });

  it('should refuse a file that is not JSON, not UTF-8, or not a file', () => {
    expect(load(null, '{"crew": ')).toMatchObject({ code: 'CREW_INVALID' });
    expect(load(null, Buffer.from([0x7b, 0xff, 0x7d]).toString('latin1'))).toMatchObject({ code: 'CREW_INVALID' });
    expect(() => loadCrew(root, root)).toThrow(/not a regular file/);
  });

  it('should fill placeholders inside argv elements without a shell', () => {
    expect(launchOf(['run', '--in={prompt}', '{result}', '$(rm -rf {lane})', '{other}'], { role: 'agent', prompt: 'p q', result: 'r', lane: 'l' }).argv).toEqual(['run', '--in=p q', 'r', '$(rm -rf l)', '{other}']);
  });

  it('should take a preset where an argv stands, in the crew and in a lane', () => {
    const crew = load({ ...base, runners: { ...base.runners, native: { preset: 'claude-code', model: 'claude-sonnet-4-5' } }, lanes: [{ id: 'a', plan: 'plans/1.md', runners: { agent: { preset: 'codex', args: ['--x'], env: { OPENAI_API_KEY: 'k' } } } }], prices: { 'gpt-5.5': { input: 1, output: 10 } } });
    if (!('lanes' in crew)) throw new Error(crew.message);
    expect(crew.lanes[0]!.runners.native).toEqual({ preset: 'claude-code', model: 'claude-sonnet-4-5' });
    expect(crew.lanes[0]!.runners.agent).toEqual({ preset: 'codex', args: ['--x'], env: { OPENAI_API_KEY: 'k' } });
  });

  it.each([
    ['an unknown preset', { preset: 'claude' }],
    ['a preset with an unknown key', { preset: 'codex', shell: 'x' }],
    ['a LANEWARD_ variable in a preset env', { preset: 'codex', env: { LANEWARD_LANE: 'x' } }],
    ['an env name that is not one', { preset: 'codex', env: { 'A B': 'x' } }],
    ['an empty model', { preset: 'codex', model: '' }],
    ['a model of 100,000 characters', { preset: 'codex', model: 'm'.repeat(100_000) }],
    ['a non-string arg', { preset: 'codex', args: [1] }],
  ])('should refuse %s as CREW_INVALID naming runners.agent', (_, agent) => {
    expect(load({ ...base, runners: { ...base.runners, agent }, lanes: [{ id: 'a', plan: 'plans/1.md' }] })).toMatchObject({ code: 'CREW_INVALID', message: expect.stringContaining('runners.agent') });
  });

  it.each([
    ['a negative price', { m: { input: -1, output: 1 } }],
    ['an infinite price', { m: { input: 1e400, output: 1 } }],
    ['an unknown price field', { m: { input: 1, output: 1, per: 'token' } }],
    ['an empty model name', { '': { input: 1, output: 1 } }],
  ])('should refuse prices with %s as CREW_INVALID naming prices', (_, prices) => {
    // JSON has no Infinity: 1e400 is written as text, and JSON.parse reads it as Infinity.
    const text = JSON.stringify({ ...base, prices, lanes: [{ id: 'a', plan: 'plans/1.md' }] }).replace('"input":null', '"input":1e400');
    expect(load(undefined, text)).toMatchObject({ code: 'CREW_INVALID', message: expect.stringContaining('prices') });
  });

  it.each([
    ['a typo of an optional key', { ...base, lanes: [{ id: 'a', plan: 'plans/1.md' }], worksapce: { repo: '.' } }, 'worksapce: unknown key "worksapce"; did you mean "workspace"?'],
    // The typo also leaves "actions" missing; the typo is what to correct.
    ['a typo of a required key', { ...base, actions: undefined, actoins: base.actions, lanes: [{ id: 'a', plan: 'plans/1.md' }] }, 'actoins: unknown key "actoins"; did you mean "actions"?'],
    ['a typo inside limits', { ...base, limits: { concurency: 2 }, lanes: [{ id: 'a', plan: 'plans/1.md' }] }, 'limits.concurency: unknown key "concurency"; did you mean "concurrency"?'],
    ['a typo inside a lane', { ...base, lanes: [{ id: 'a', plna: 'plans/1.md' }] }, 'lanes.0.plna: unknown key "plna"; did you mean "plan"?'],
    ['a typo inside a preset runner', { ...base, runners: { ...base.runners, agent: { preset: 'codex', modle: 'm' } }, lanes: [{ id: 'a', plan: 'plans/1.md' }] }, 'runners.agent.modle: unknown key "modle"; did you mean "model"?'],
    ['a key like none it knows', { ...base, limits: { zzzzzzzz: 1 }, lanes: [{ id: 'a', plan: 'plans/1.md' }] }, 'limits.zzzzzzzz: unknown key "zzzzzzzz"; the keys there are "concurrency", "lanes", "spend_cap_usd"'],
    ['a required key missing', { ...base, models: undefined, lanes: [{ id: 'a', plan: 'plans/1.md' }] }, 'models: a required key is missing'],
  ])('should name %s with the key it knows (CREW_INVALID)', (_what, value, message) => {
    const crew = load(value);
    expect(crew).toMatchObject({ code: 'CREW_INVALID' });
    expect((crew as { message: string }).message).toContain(message);
    expect((crew as { message: string }).message).not.toContain('Expected never');
  });

  it.each([
    ['a value missing on line 3', '{\n  "schema_version": 1,\n  "crew": ,\n}', 'line 3 column 11: expected a JSON value'],
    ['a trailing comma', '{"schema_version": 1,\n"crew": "c",\n}', 'line 3 column 1: expected a "key" in double quotes'],
    ['a cut file', '{"schema_version": 1,\n"crew": "c"', 'line 2 column 12: expected \',\' or \'}\''],
    ['two documents', '{}\n{}', 'line 2 column 1: expected the end of the text (one JSON document)'],
  ])('should give %s as a line and a column, not a byte position', (_what, text, where) => {
    const crew = load(null, text);
    expect(crew).toMatchObject({ code: 'CREW_INVALID', message: `the crew file is not one JSON document (${where})` });
  });
});
