import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { loadCrew, type LoadedCrew } from '../main/crew/load-crew.ts';
import { resumeAdvice, retryAdvice } from '../main/crew/retry-advice.ts';
import { crewFiles } from '../main/init/crew-files.ts';
import { writeCrewDir } from '../main/init/write-crew.ts';
import { rehearsedCrew, startRehearsal } from '../main/rehearse/rehearsal.ts';
import type { PresetRunner } from '../formats/providers/runner.ts';
import { codesOf, ensureBuilt, laneward } from './helpers/cli.ts';
import { gitRepo } from './helpers/real-crew.ts';
import { tempRoot } from './helpers/tmp.ts';

const root = tempRoot('rehearse');
const URL = 'http://127.0.0.1:9';
let loaded: LoadedCrew;

beforeAll(() => {
  ensureBuilt();
  const repo = gitRepo(join(root, 'repo'));
  const dir = join(root, 'crew');
  const files = crewFiles(
    { crew: 'c', repo, tasks: ['one', 'two'], providers: ['claude-code', 'codex'], fixtures: '/f', node: process.execPath },
    { privatePem: 'k', publicPem: 'p', sign: () => 's' },
  );
  // Lane 2's native reviewer is an argv; the crew's native preset carries an env of its own.
  const crew = JSON.parse(files.at(-1)!.content);
  crew.runners.native.env = { ANTHROPIC_BASE_URL: 'https://api.example', MY_SETTING: 'kept' };
  crew.lanes[1].runners = { ...crew.lanes[1].runners, native: [process.execPath, '/f/reviewer.mjs', '{prompt}', '{result}'] };
  writeCrewDir(dir, [...files.slice(0, -1), { path: 'crew.json', content: JSON.stringify(crew), mode: 0o644 }]);
  loaded = loadCrew(join(dir, 'crew.json'), root);
});

describe('rehearsedCrew', () => {
  test('should run the crew as <crew>-rehearsal into <out>-rehearsal, so the real run finds none of it', () => {
    const rehearsed = rehearsedCrew(loaded, join(root, 'state'), URL);
    expect(rehearsed.crew.crew).toBe('c-rehearsal');
    expect(rehearsed.out).toBe(`${loaded.out}-rehearsal`);
    expect(rehearsed.workspace).toEqual(loaded.workspace);
    expect(rehearsed.lanes.map((l) => [l.id, l.plan])).toEqual(loaded.lanes.map((l) => [l.id, l.plan]));
    // The crew as loaded is left as it was.
    expect(loaded.crew.crew).toBe('c');
  }, 180_000);

  test('should point every preset at the server over its own env, in a private home per role and preset', () => {
    const state = join(root, 'state');
    const rehearsed = rehearsedCrew(loaded, state, URL);
    const homes = join(state, 'rehearsal', 'c-rehearsal', 'homes');
    const [one, two] = rehearsed.lanes;
    const native = one!.runners.native as PresetRunner;
    expect(native).toMatchObject({ preset: 'claude-code', model: 'claude-sonnet-4-5' });
    expect(native.env).toMatchObject({ ANTHROPIC_BASE_URL: URL, HOME: join(homes, 'native-claude-code'), MY_SETTING: 'kept', CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' });
    expect(native.env?.['ANTHROPIC_API_KEY']).toBeDefined();
    const outside = one!.runners.outside as PresetRunner;
    expect(outside.env).toMatchObject({ CODEX_HOME: join(homes, 'outside-codex', 'codex'), HOME: join(homes, 'outside-codex') });
    expect(readFileSync(join(homes, 'outside-codex', 'codex', 'config.toml'), 'utf8')).toContain(`base_url = "${URL}/v1"`);
    // Lane 2's agent is codex (agents take the presets in turn), with a home of its own role.
    expect((two!.runners.agent as PresetRunner).env).toMatchObject({ CODEX_HOME: join(homes, 'agent-codex', 'codex') });
    expect((one!.runners.agent as PresetRunner).env).toMatchObject({ HOME: join(homes, 'agent-claude-code') });
    // An argv runner runs as written.
    expect(two!.runners.native).toEqual([process.execPath, '/f/reviewer.mjs', '{prompt}', '{result}']);
  }, 180_000);
});

describe('startRehearsal', () => {
  test('should answer on loopback until closed', async () => {
    const rehearsal = await startRehearsal();
    expect(rehearsal.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const reply = await fetch(`${rehearsal.url}/v1/messages`, { method: 'POST', body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'laneward QA observer' }] }) });
    expect(reply.status).toBe(200);
    expect(JSON.stringify(await reply.json())).toContain('"verdict\\":\\"pass\\"');
    await rehearsal.close();
    await expect(fetch(rehearsal.url)).rejects.toThrow();
  }, 180_000);
});

describe('two rehearsals of one crew', () => {
  test('should refuse the second (CREW_BUSY) before it rewrites the first one\'s homes, and take it once the first closed', async () => {
    const state = join(root, 'state-twice');
    const first = await startRehearsal();
    const second = await startRehearsal();
    try {
      first.apply(loaded, state);
      const config = join(state, 'rehearsal', 'c-rehearsal', 'homes', 'outside-codex', 'codex', 'config.toml');
      expect(readFileSync(config, 'utf8')).toContain(first.url);
      expect(() => second.apply(loaded, state)).toThrow(expect.objectContaining({ code: 'CREW_BUSY' }));
      expect(readFileSync(config, 'utf8')).toContain(first.url);
      await first.close();
      second.apply(loaded, state);
      expect(readFileSync(config, 'utf8')).toContain(second.url);
    } finally {
      await first.close();
      await second.close();
    }
  }, 180_000);
});

describe('the commands a rehearsal prints', () => {
  test('should rehearse again when they retry or resume', () => {
    expect(retryAdvice('crew.json', 'state', ['--rehearse'])).toBe('laneward crew run crew.json --retry-failed --state state --rehearse');
    expect(resumeAdvice('crew.json', 'state', ['--rehearse'])).toBe('laneward crew run crew.json --state state --rehearse');
    expect(resumeAdvice('crew.json', 'state')).toBe('laneward crew run crew.json --state state');
  }, 180_000);
});

describe('laneward crew run --rehearse', () => {
  test('should run a crew of argv runners as written, as <crew>-rehearsal, and crew status --rehearse should read it', () => {
    const cwd = join(root, 'fixture-crew');
    const init = laneward(['init', '--repo', join(root, 'repo'), '--task', 'one', '--providers', 'fixtures', '--crew', 'fx', '--out', cwd], { cwd: root });
    expect(init.code, init.stderr).toBe(0);
    const state = join(cwd, 'state');
    const ran = laneward(['crew', 'run', 'crew.json', '--rehearse', '--state', state], { cwd, timeoutMs: 120_000 });
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toMatch(new RegExp(`^CREW_LANE: lane=task-1 status=complete .* run=${join(cwd, 'runs-rehearsal', 'task-1')} branch=laneward/fx-rehearsal/\\d{8}T\\d{6}Z-[0-9a-f]{6}/task-1 `, 'm'));
    const status = laneward(['crew', 'status', 'crew.json', '--rehearse', '--state', state], { cwd });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toMatch(/^CREW_STATUS: crew=fx-rehearsal run=done lanes=1 .* complete=1 failed=0 /m);
    // The real crew has not run.
    expect(laneward(['crew', 'status', 'crew.json', '--state', state], { cwd }).stdout).not.toMatch(/run=done/);
  }, 180_000);

  test('should refuse --queue (exit 2 USAGE): queue workers cannot reach a loopback server', () => {
    const ran = laneward(['crew', 'run', join(root, 'crew', 'crew.json'), '--rehearse', '--queue', 'redis://127.0.0.1:1', '--key', 'k'], { cwd: root });
    expect(ran.code).toBe(2);
    expect(codesOf(ran.stderr)).toEqual(['USAGE']);
  }, 180_000);
});
