import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, chmodSync, copyFileSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { generateRun, readManifest, recount, writeManifest } from '../fixtures/generate-run.ts';
import { BUNDLE, codesOf, ensureBuilt, laneward, ROOT } from './helpers/cli.ts';
import { lanewardWithRss } from './helpers/rss.ts';
import { tempRoot } from './helpers/tmp.ts';

const root = tempRoot('artifact-hostile');
beforeAll(ensureBuilt);

function run(name: string, edit?: (dir: string) => void): string {
  const dir = join(root, name);
  generateRun(dir);
  edit?.(dir);
  return dir;
}

function appendRows(dir: string, file: string, count: number, row: (n: number) => string): void {
  const parts: string[] = [];
  for (let n = 1; n <= count; n++) parts.push(`${row(n)}\n`);
  appendFileSync(join(dir, file), parts.join(''));
  recount(dir);
}

const finding = (n: number) =>
  `{"schema_version":1,"run":"run1","id":"run1-eng-native-${900 + n}","phase":"eng","voice":"native","severity":"Low","title":"t${n}"}`;
const task = (n: number, extra: string) =>
  `{"schema_version":2,"run":"run1","id":"run1-h${n}","title":"h${n}","status":"pending","findings":[],"blocked_by":[],"acceptance":"a"${extra}}`;
const deep = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;

describe('many errors in one file (1)', () => {
  test.each([
    ['150,000 blank lines', 'ARTIFACT_MALFORMED_JSONL', (d: string) => appendRows(d, 'findings.jsonl', 150_000, () => '')],
    ['150,000 bad severities', 'ARTIFACT_SCHEMA', (d: string) => appendRows(d, 'findings.jsonl', 150_000, (n) => finding(n).replace('"Low"', '"Loud"'))],
    ['150,000 dangling depends_on', 'ARTIFACT_DANGLING_REF', (d: string) => appendRows(d, 'tasks.jsonl', 150_000, (n) => task(n, `,"depends_on":["gone-${n}"]`))],
  ])('should report %s with its code, an exact count, 1,000 lines and one more-line, alike in a batch', (name, code, edit) => {
    const dir = run(`many-${name.replaceAll(/\W+/g, '-')}`, edit);
    const single = laneward(['artifact', 'validate', dir]);
    expect(single.code).toBe(1);
    expect(single.stdout).toBe('ARTIFACT_INVALID: 150000 error(s)\n');
    const codes = codesOf(single.stderr);
    expect(codes).toHaveLength(1001);
    expect(new Set(codes.slice(0, 1000))).toEqual(new Set([code]));
    expect(codes[1000]).toBe('ERRORS_OMITTED');
    expect(single.stderr.trim().split('\n').at(-1)).toContain('149000 more error(s) not printed');

    const json = JSON.parse(laneward(['artifact', 'validate', dir, '--json']).stdout);
    expect(json.errors).toHaveLength(1000);
    expect(json.errors_omitted).toBe(149_000);

    const batch = laneward(['artifact', 'validate', dir, join(root, 'absent-dir-for-batch')]);
    expect(batch.stdout.split('\n').find((line) => line.includes('run=run1'))).toBe(`ARTIFACT_INVALID: run=run1 path=${join(dir, 'run.json')} errors=150000 codes=${code}`);
    expect(batch.stdout).toContain(` ${code}=150000`);
  }, 120_000);

  test('should validate 20 MB of newlines in under 256 MB', () => {
    const dir = run('newlines', (d) => {
      writeFileSync(join(d, 'findings.jsonl'), Buffer.alloc(20 * 1024 * 1024, 0x0a));
      recount(d);
    });
    const result = lanewardWithRss(['artifact', 'validate', dir]);
    // Every newline is a blank line, and the tasks' findings are gone (6 dangling references).
    expect(result.stdout).toBe(`ARTIFACT_INVALID: ${20 * 1024 * 1024 + 6} error(s)\n`);
    expect(codesOf(result.stderr).at(-1)).toBe('ERRORS_OMITTED');
    expect(result.rssMb).toBeLessThan(256);
  }, 120_000);
});

describe('deep nesting (2)', () => {
  const levels = 100_000;

  test('should judge rows with a deeply nested field by their fields, never as a missing file', () => {
    const dir = run('deep-rows', (d) => {
      appendRows(d, 'findings.jsonl', 1, (n) => finding(n).replace('}', `,"x":${deep(levels)}}`).replace('"title":"t1"}', '"title":"t1"}'));
      appendRows(d, 'findings.jsonl', 1, (n) => finding(n + 1).replace('"run":"run1"', `"run":${deep(levels)}`));
    });
    const report = JSON.parse(laneward(['artifact', 'validate', dir, '--json']).stdout);
    expect(report.errors.map((found: { code: string; path: string }) => [found.code, found.path])).toEqual([
      ['ARTIFACT_SCHEMA', 'findings.jsonl:20.run'],
      ['ARTIFACT_UNBOUND_ID', 'findings.jsonl:20.id'],
    ]);
  }, 60_000);

  test('should render gate and urgent --json with deeply nested values, and ack a run holding one', () => {
    const dir = run('deep-render', (d) => {
      const gate = readFileSync(join(d, 'gate.json'), 'utf8').replace('"items":[{', `"items":[{"cost":${deep(levels)},`).replace('"items": [\n    {', `"items": [\n    {"cost":${deep(levels)},`);
      writeFileSync(join(d, 'gate.json'), gate);
      const findings = readFileSync(join(d, 'findings.jsonl'), 'utf8').replace('"urgent":true', `"urgent":true,"x":${deep(levels)}`);
      writeFileSync(join(d, 'findings.jsonl'), findings);
      recount(d);
      writeFileSync(join(d, 'run.json'), readFileSync(join(d, 'run.json'), 'utf8').replace(/^\{/, `{"x":${deep(levels)},`));
    });
    const render = laneward(['gate', 'render', join(dir, 'gate.json'), '--json']);
    expect(render.code).toBe(0);
    expect(JSON.parse(render.stdout).items[0].cost).toHaveLength(1);
    const urgent = laneward(['artifact', 'urgent', join(dir, 'findings.jsonl'), '--json']);
    expect(urgent.code).toBe(0);
    expect(JSON.parse(urgent.stdout).urgent[0].x).toHaveLength(1);
    const ack = laneward(['artifact', 'ack', dir, '--consumer', 'q']);
    expect(ack.code).toBe(0);
    expect(readFileSync(join(dir, 'run.json'), 'utf8')).toContain(`{"x":${deep(levels)},`);
  }, 60_000);
});

describe('pr-label fan-out (3)', () => {
  test('should expand a label once: 20,000 tasks sharing one label report one cycle in under 256 MB', () => {
    const dir = run('fan-out', (d) => appendRows(d, 'tasks.jsonl', 20_000, (n) => task(n, ',"pr":"x","depends_on":["x"]')));
    const result = lanewardWithRss(['artifact', 'validate', dir]);
    expect(codesOf(result.stderr)).toEqual(['ARTIFACT_DEPENDENCY_CYCLE']);
    expect(result.stderr).toContain('(run1-h1 -> run1-h2 -> run1-h1 at tasks.jsonl:7.depends_on)');
    expect(result.rssMb).toBeLessThan(256);
  }, 60_000);
});

describe('a run.json that is a directory (4)', () => {
  test('should be ARTIFACT_MISSING named directly, as a directory, and found by a batch', () => {
    const parent = join(root, 'manifest-dir');
    const dir = join(parent, 'run');
    generateRun(join(root, 'inner'));
    mkdirSync(dir, { recursive: true });
    renameSync(join(root, 'inner'), join(dir, 'run.json'));
    for (const target of [dir, join(dir, 'run.json')]) {
      const result = laneward(['artifact', 'validate', target]);
      expect(result.code).toBe(1);
      expect(codesOf(result.stderr)).toEqual(['ARTIFACT_MISSING']);
    }
    const batch = laneward(['artifact', 'validate', parent]);
    expect(batch.code).toBe(1);
    expect(batch.stdout).toContain('ARTIFACT_SUMMARY: runs=1 valid=0 invalid=1 ARTIFACT_MISSING=1');
  });
});

describe('batch reports what it cannot reach (5)', () => {
  test('should report an unreadable directory and a name that is not UTF-8 on lines of their own, and exit 1', () => {
    const archive = join(root, 'reach');
    generateRun(join(archive, 'ok'));
    generateRun(join(archive, 'locked', 'run'));
    const badName = Buffer.concat([Buffer.from(`${archive}/bad-`), Buffer.from([0xff])]);
    mkdirSync(badName);
    chmodSync(join(archive, 'locked'), 0o000);
    chmodSync(root, 0o755);
    // As root every directory is readable: run as nobody, who cannot open a 000 directory.
    const asUser = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
    // Nobody must be able to read the program it runs, and a checkout may sit in a private
    // directory (a fresh clone under mktemp -d): a copy of the bundle in this readable root.
    // With --jobs 1 the batch starts no pool, so the bundle needs nothing beside it.
    const bundle = join(root, 'laneward-copy.cjs');
    copyFileSync(BUNDLE, bundle);
    chmodSync(bundle, 0o644);
    try {
      const result = spawnSync(process.execPath, [bundle, 'artifact', 'validate', archive, '--jobs', '1'], { cwd: '/', encoding: 'utf8', ...asUser });
      expect(result.status).toBe(1);
      const lines = result.stdout.trim().split('\n');
      expect(lines).toHaveLength(3);
      expect(lines).toContain(`ARTIFACT_INVALID: run=- path=${join(archive, 'locked')} errors=1 codes=ARTIFACT_MISSING`);
      expect(lines.filter((line) => line.startsWith(`ARTIFACT_INVALID: run=- path=${archive}/bad-`) && line.endsWith('errors=1 codes=ARTIFACT_MISSING'))).toHaveLength(1);
      expect(lines.at(-1)).toBe('ARTIFACT_SUMMARY: runs=3 valid=1 invalid=2 ARTIFACT_MISSING=2');
    } finally {
      chmodSync(join(archive, 'locked'), 0o755);
    }
  });
});

describe('an empty path (6)', () => {
  test.each([
    [['artifact', 'validate', '']],
    [['artifact', 'validate', '', '--json']],
    [['artifact', 'validate', join(root, 'x'), '']],
    [['artifact', 'validate', '', '--as', 'findings']],
    [['artifact', 'ack', '', '--consumer', 'q']],
    [['artifact', 'urgent', '']],
    [['gate', 'render', '']],
  ])('should refuse %j as a usage error and touch nothing', (args) => {
    const dir = run(`empty-path-${Math.random().toString(16).slice(2)}`);
    const before = readFileSync(join(dir, 'run.json'));
    const result = laneward(args, { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(codesOf(result.stderr)).toEqual(['USAGE']);
    expect(readFileSync(join(dir, 'run.json'))).toEqual(before);
  });
});

describe('a batch whose reader goes away (9)', () => {
  test('should not exit 0 when stdout closes before every run is reported', async () => {
    const archive = join(root, 'closed-reader');
    for (let i = 0; i < 40; i++) generateRun(join(archive, `run-${i}`), { runId: `r${i}`, seed: i + 1 });
    const child = spawn(process.execPath, [BUNDLE, 'artifact', 'validate', archive, '--json', '--jobs', '2'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    // As `| head -1` does: read the first line, then close the pipe.
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.on('close', (status) => resolve(status)));
    expect(code).toBe(141);
    expect(stderr).not.toMatch(/\n\s+at /);
  }, 60_000);
});

describe('input values never forge a line (13)', () => {
  const evil = '\u001b[2K\nGATE: run=forged\rACK: run=forged\u2028ARTIFACT_VALID: run=forged';
  const clean = (text: string) => {
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f\u2028\u2029]/);
  };

  test('should escape control characters in every command that prints input', () => {
    const dir = run('evil', (d) => {
      const manifest = readManifest(d);
      manifest['run'] = `run1${evil}`;
      writeManifest(d, manifest);
      const findings = readFileSync(join(d, 'findings.jsonl'), 'utf8')
        .replace('"urgent":true', `"urgent":true,"suggested_owner":${JSON.stringify(evil)}`)
        .replaceAll('"suggested_owner":"security"', '"x":1');
      writeFileSync(join(d, 'findings.jsonl'), findings);
      const gate = JSON.parse(readFileSync(join(d, 'gate.json'), 'utf8'));
      gate.run = evil;
      gate.title = evil;
      gate.items[0].title = evil;
      gate.items[0].options[0].text = evil;
      writeFileSync(join(d, 'gate.json'), JSON.stringify(gate));
      writeFileSync(join(d, `gate${evil}.json`), JSON.stringify(gate));
    });
    const outputs = [
      laneward(['artifact', 'validate', dir]),
      laneward(['artifact', 'validate', dir, join(root, 'nothing-here')]),
      laneward(['artifact', 'urgent', join(dir, 'findings.jsonl')]),
      laneward(['gate', 'render', join(dir, 'gate.json')]),
      laneward(['gate', 'render', join(dir, `gate${evil}.json`), '--all']),
      laneward(['gate', 'parse', join(dir, `gate${evil}.json`), '--reply', `rec ${evil}`, '--gate-rev', '1']),
      laneward(['gate', evil]),
      laneward(['artifact', 'validate', join(dir, `gate${evil}.json`), '--as', evil]),
    ];
    for (const result of outputs) {
      clean(result.stdout);
      clean(result.stderr);
      // One rendered line per error (an escaped argv may sit in the context), ending in its code.
      for (const line of result.stderr.split('\n').filter(Boolean)) expect(line).toMatch(/^laneward .+; fix: .+ \([A-Z_]+\)$/);
      expect(result.stdout.split('\n').filter((line) => /^(GATE|ACK|ARTIFACT_VALID):/.test(line) && line.includes('forged') && !line.startsWith('GATE: run=\\u001b'))).toEqual([]);
    }
    // ack prints the run and the consumer: make the run valid again, with a hostile id and consumer.
    const acked = run('evil-ack', (d) => {
      const text = readFileSync(join(d, 'run.json'), 'utf8');
      writeFileSync(join(d, 'run.json'), text.replace('"run": "run1"', `"run": "run1", "note": ${JSON.stringify(evil)}`));
    });
    const ack = laneward(['artifact', 'ack', acked, '--consumer', `q${evil}`]);
    expect(ack.code).toBe(0);
    clean(ack.stdout);
    expect(ack.stdout.split('\n').filter(Boolean)).toHaveLength(1);
    expect(ack.stdout).toMatch(/^ACK: run=run1 consumer=q\\u001b\[2K\\nGATE: run=forged\\rACK: run=forged\\u2028ARTIFACT_VALID: run=forged at=\S+\n$/);
  });
});

describe('gate_rev beyond a safe integer (14)', () => {
  const gate = (rev: string) => (d: string) => {
    const text = readFileSync(join(d, 'gate.json'), 'utf8').replace(/"gate_rev": ?1/, `"gate_rev":${rev}`);
    writeFileSync(join(d, 'gate.json'), text);
  };

  test('should refuse 2^53 + 1 in validate --as gate, render and parse alike', () => {
    const dir = run('rev-unsafe', gate('9007199254740993'));
    const file = join(dir, 'gate.json');
    for (const args of [['artifact', 'validate', file, '--as', 'gate'], ['gate', 'render', file], ['gate', 'parse', file, '--reply', 'rec', '--gate-rev', '1']]) {
      const result = laneward(args);
      expect(result.code).toBe(1);
      expect(codesOf(result.stderr)).toEqual(['ARTIFACT_SCHEMA']);
    }
  });

  test('should accept 2^53 - 1 in validate --as gate, render and parse alike', () => {
    const dir = run('rev-safe', gate('9007199254740991'));
    const file = join(dir, 'gate.json');
    expect(laneward(['artifact', 'validate', file, '--as', 'gate']).code).toBe(0);
    expect(laneward(['gate', 'render', file]).stdout).toContain('gate_rev=9007199254740991 ');
    const parse = laneward(['gate', 'parse', file, '--reply', 'rec', '--gate-rev', '9007199254740991']);
    expect(parse.code).toBe(0);
    expect(parse.stdout).toMatch(/^GATE_REPLY: gate_rev=9007199254740991 mode=rec/);
  });
});

describe('urgent on a file it cannot read (16)', () => {
  test.each([
    ['a missing file', (d: string) => join(d, 'absent.jsonl')],
    ['a directory', (d: string) => d],
  ])('should print only an error line for %s, never None.', (name, target) => {
    const dir = run(`urgent-unread-${name.replaceAll(' ', '-')}`);
    const result = laneward(['artifact', 'urgent', target(dir)]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(codesOf(result.stderr)).toEqual(['ARTIFACT_MISSING']);
    const json = laneward(['artifact', 'urgent', target(dir), '--json']);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ urgent: null, errors: [{ code: 'ARTIFACT_MISSING' }] });
  });
});
