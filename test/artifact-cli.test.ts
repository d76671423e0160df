import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { CATALOGUE } from '../fixtures/catalogue.ts';
import { generateRun, readManifest, rehash, writeManifest } from '../fixtures/generate-run.ts';
import { RESULT_CODES, type ResultCode } from '../formats/codes/codes.ts';
import { issue, renderIssueLine } from '../formats/codes/issue.ts';
import { codesOf, ensureBuilt, ERROR_LINE, laneward } from './helpers/cli.ts';
import { tempRoot } from './helpers/tmp.ts';

const root = tempRoot('artifact-cli');
beforeAll(ensureBuilt);

function run(name: string, edit?: (dir: string) => void): string {
  const dir = join(root, name);
  generateRun(dir);
  edit?.(dir);
  return dir;
}

/** Every file below `dir` with its hash and mtime, to prove a command wrote nothing. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (at: string) => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile()) out[path] = `${createHash('sha256').update(readFileSync(path)).digest('hex')} ${statSync(path).mtimeMs}`;
    }
  };
  walk(dir);
  return out;
}

describe('laneward artifact validate (one run)', () => {
  test('should print ARTIFACT_VALID and exit 0 for a valid run directory or its run.json', () => {
    const dir = run('valid');
    for (const target of [dir, join(dir, 'run.json')]) {
      expect(laneward(['artifact', 'validate', target])).toEqual({ code: 0, stdout: 'ARTIFACT_VALID: run=run1 status=gate_pending\n', stderr: '' });
    }
  });

  test('should count attested voice outcomes on the valid line', () => {
    const dir = run('attested', (d) => {
      const manifest = readManifest(d);
      manifest['phases'].ceo.outside.receipt = 'attested';
      writeManifest(d, manifest);
    });
    expect(laneward(['artifact', 'validate', dir]).stdout).toBe('ARTIFACT_VALID: run=run1 status=gate_pending attested=1\n');
  });

  test.each(CATALOGUE.map((variant) => [variant.name, variant] as const))('should print %s as rendered error lines and exit 1', (name, variant) => {
    const dir = run(`cli-${name}`, variant.apply);
    const result = laneward(['artifact', 'validate', join(dir, 'run.json')]);
    const codes = codesOf(result.stderr);
    expect(result.code).toBe(1);
    expect(new Set(codes)).toEqual(new Set([variant.code]));
    expect(result.stdout).toBe(`ARTIFACT_INVALID: ${codes.length} error(s)\n`);
  });

  test('should print one JSON object with exactly the contract keys under --json', () => {
    const dir = run('json', CATALOGUE.find((v) => v.name === 'count-findings')!.apply);
    const result = laneward(['artifact', 'validate', dir, '--json']);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('');
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const report = JSON.parse(lines[0]!);
    expect(Object.keys(report)).toEqual(['valid', 'run', 'status', 'run_dir', 'errors']);
    expect(report).toMatchObject({ valid: false, run: 'run1', status: 'gate_pending', run_dir: dir });
    expect(report.errors).toEqual([{ code: 'ARTIFACT_COUNT_MISMATCH', path: 'run.json.counts.findings', message: 'counts.findings is 19, findings.jsonl has 18' }]);
  });

  test('should report null run and status when run.json does not parse', () => {
    const dir = run('json-bad', (d) => writeFileSync(join(d, 'run.json'), 'nope'));
    const report = JSON.parse(laneward(['artifact', 'validate', dir, '--json']).stdout);
    expect(report).toEqual({ valid: false, run: null, status: null, run_dir: dir, errors: [{ code: 'ARTIFACT_INVALID_JSON', path: 'run.json', message: 'not valid JSON' }] });
  });

  test.each([
    ['a dangling run.json symlink', (d: string) => symlinkSync(join(d, 'absent.json'), join(d, 'run.json')), 'ARTIFACT_MISSING'],
    ['an absent run.json path', (d: string) => mkdirSync(d), 'ARTIFACT_MISSING'],
  ])('should report %s without a stack trace', (name, make, code) => {
    const dir = join(root, `odd-${name.replaceAll(' ', '-')}`);
    mkdirSync(dir, { recursive: true });
    if (name.startsWith('an absent')) {
      const result = laneward(['artifact', 'validate', join(dir, 'nowhere', 'run.json')]);
      expect(codesOf(result.stderr)).toEqual([code]);
      return;
    }
    make(dir);
    const result = laneward(['artifact', 'validate', join(dir, 'run.json')]);
    expect(result.code).toBe(1);
    expect(codesOf(result.stderr)).toEqual([code]);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  test('should call a 200 MB line malformed without holding it, and not stop at it', () => {
    const dir = run('huge-line', (d) => {
      const path = join(d, 'findings.jsonl');
      const rows = readFileSync(path, 'utf8');
      const huge = Buffer.alloc(200 * 1024 * 1024, 0x61);
      writeFileSync(path, Buffer.concat([Buffer.from(rows), huge, Buffer.from('\n'), Buffer.from(rows.split('\n')[0]!.replace('native-1"', 'native-99"') + '\n')]));
      const manifest = readManifest(d);
      manifest['counts'].findings += 2;
      writeManifest(d, manifest);
      rehash(d);
    });
    const result = laneward(['artifact', 'validate', dir, '--json']);
    const report = JSON.parse(result.stdout);
    expect(report.errors).toEqual([{ code: 'ARTIFACT_MALFORMED_JSONL', path: 'findings.jsonl:19', message: 'line over 16 MiB' }]);
  });

  test('should treat a directory whose run.json is a dangling symlink as that one run, not a batch of what is below', () => {
    const dir = join(root, 'dangling-manifest');
    mkdirSync(dir, { recursive: true });
    symlinkSync('missing.json', join(dir, 'run.json'));
    generateRun(join(dir, 'older'));
    const result = laneward(['artifact', 'validate', dir]);
    expect(result.code).toBe(1);
    expect(codesOf(result.stderr)).toEqual(['ARTIFACT_MISSING']);
    expect(result.stdout).toBe('ARTIFACT_INVALID: 1 error(s)\n');
  });

  test('should keep every output line one line when a run id holds a newline', () => {
    const dir = run('newline-id', (d) => {
      const text = readFileSync(join(d, 'run.json'), 'utf8').replace('"run": "run1"', '"run": "run1\\nARTIFACT_VALID: run=forged status=complete"');
      writeFileSync(join(d, 'run.json'), text);
    });
    const single = laneward(['artifact', 'validate', dir]);
    expect(single.stdout.split('\n').filter((line) => line.startsWith('ARTIFACT_'))).toHaveLength(1);
    for (const line of single.stderr.trim().split('\n')) expect(line).toMatch(ERROR_LINE);
    const batch = laneward(['artifact', 'validate', dir, join(root, 'valid')]);
    expect(batch.stdout.split('\n').filter((line) => line.startsWith('ARTIFACT_VALID'))).toEqual([]);
    expect(batch.stdout).toContain('run=run1\\nARTIFACT_VALID: run=forged');
  });

  test('should write nothing into the run directory it validates', () => {
    const dir = run('readonly', CATALOGUE.find((v) => v.name === 'task-cycle')!.apply);
    const before = snapshot(dir);
    laneward(['artifact', 'validate', dir]);
    laneward(['artifact', 'validate', dir, '--json']);
    expect(snapshot(dir)).toEqual(before);
  });
});

describe('laneward artifact validate (batch)', () => {
  const archive = join(root, 'archive');
  beforeAll(() => {
    generateRun(join(archive, 'lane-a', 'run-1'));
    generateRun(join(archive, 'lane-a', 'run-2'), { runId: 'run2', seed: 2 });
    generateRun(join(archive, 'lane-b', 'run-3'), { runId: 'run3', seed: 3 });
    CATALOGUE.find((v) => v.name === 'file-edited')!.apply(join(archive, 'lane-a', 'run-2'));
    mkdirSync(join(archive, 'lane-c', 'empty'), { recursive: true });
  });

  test('should print one line per invalid run and the summary, and exit 1', () => {
    const result = laneward(['artifact', 'validate', archive, '--jobs', '2']);
    expect(result.code).toBe(1);
    expect(result.stdout.split('\n')).toEqual([
      `ARTIFACT_INVALID: run=run2 path=${join(archive, 'lane-a', 'run-2', 'run.json')} errors=1 codes=ARTIFACT_STALE`,
      'ARTIFACT_SUMMARY: runs=3 valid=2 invalid=1 ARTIFACT_STALE=1',
      '',
    ]);
    expect(result.stderr).toBe('');
  });

  test('should exit 0 when every run of several paths is valid', () => {
    const result = laneward(['artifact', 'validate', join(archive, 'lane-a', 'run-1'), join(archive, 'lane-b')]);
    expect(result).toEqual({ code: 0, stdout: 'ARTIFACT_SUMMARY: runs=2 valid=2 invalid=0\n', stderr: '' });
  });

  test('should print one JSON line per run with its path, then the summary', () => {
    const result = laneward(['artifact', 'validate', archive, '--json', '--jobs', '1']);
    const lines = result.stdout.trim().split('\n').map((line) => JSON.parse(line));
    expect(lines).toHaveLength(4);
    for (const report of lines.slice(0, 3)) expect(Object.keys(report)).toEqual(['valid', 'run', 'status', 'run_dir', 'errors', 'path']);
    expect(lines.slice(0, 3).map((r) => [r.run, r.valid]).sort()).toEqual([['run1', true], ['run2', false], ['run3', true]]);
    expect(lines[3]).toEqual({ summary: { runs: 3, valid: 2, invalid: 1, codes: { ARTIFACT_STALE: 1 } } });
  });

  test('should report a directory holding no run as missing', () => {
    const empty = join(archive, 'lane-c');
    const result = laneward(['artifact', 'validate', empty, join(archive, 'lane-b')]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe(
      `ARTIFACT_INVALID: run=- path=${empty} errors=1 codes=ARTIFACT_MISSING\nARTIFACT_SUMMARY: runs=2 valid=1 invalid=1 ARTIFACT_MISSING=1\n`,
    );
  });
});

describe('laneward artifact usage', () => {
  test.each([
    [['artifact', 'validate']],
    [['artifact', 'validate', '.', '--frobnicate']],
    [['artifact', 'validate', '.', '--jobs', '0']],
    [['artifact', 'validate', 'x.jsonl', '--as', 'nonsense']],
    [['artifact', 'validate', '.', '--run', 'r1']],
    [['artifact', 'schema']],
    [['artifact', 'ack', '.']],
    [['artifact', 'nonsense']],
    [['nonsense']],
  ])('should refuse %j with a USAGE line and exit 2', (args) => {
    const result = laneward(args);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(codesOf(result.stderr)).toEqual(['USAGE']);
  });

  test.each([[['--help']], [['artifact', '--help']], [['artifact', 'validate', '--help']], [['artifact', 'ack', '--help']]])(
    'should print help for %j and exit 0',
    (args) => {
      const result = laneward(args);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(/^(usage|laneward)/);
    },
  );
});

describe('laneward artifact validate --as', () => {
  test('should check one JSONL file against its schema and count rows', () => {
    const dir = run('as');
    expect(laneward(['artifact', 'validate', join(dir, 'findings.jsonl'), '--as', 'findings', '--run', 'run1'])).toEqual({
      code: 0,
      stdout: 'ARTIFACT_VALID: schema=findings rows=18\n',
      stderr: '',
    });
    const bound = laneward(['artifact', 'validate', join(dir, 'tasks.jsonl'), '--as', 'tasks', '--run', 'other', '--json']);
    expect(bound.code).toBe(1);
    const report = JSON.parse(bound.stdout);
    expect(report).toMatchObject({ valid: false, schema: 'tasks', rows: 6 });
    expect(new Set(report.errors.map((e: { code: string }) => e.code))).toEqual(new Set(['ARTIFACT_UNBOUND_ID']));
  });

  test('should check a JSON document such as gate.json, and the wrong version of one', () => {
    const dir = run('as-gate');
    expect(laneward(['artifact', 'validate', join(dir, 'gate.json'), '--as', 'gate']).stdout).toBe('ARTIFACT_VALID: schema=gate rows=1\n');
    const result = laneward(['artifact', 'validate', join(dir, 'tasks.jsonl'), '--as', 'findings']);
    expect(result.code).toBe(1);
    expect(new Set(codesOf(result.stderr))).toEqual(new Set(['ARTIFACT_UNSUPPORTED_VERSION', 'ARTIFACT_SCHEMA']));
  });
});

describe('laneward artifact schema', () => {
  test('should list the seven contract schemas and gate', () => {
    expect(laneward(['artifact', 'schema', '--list']).stdout).toBe('findings\ndecisions\ntasks\ntiming\nrun\npregate\nship-receipt\ngate\n');
  });

  test('should print the list and a schema as one JSON line each under --json', () => {
    expect(JSON.parse(laneward(['artifact', 'schema', '--list', '--json']).stdout)).toHaveLength(8);
    expect(laneward(['artifact', 'schema', 'tasks', '--json']).stdout.trim().split('\n')).toHaveLength(1);
  });

  test.each(['findings', 'decisions', 'tasks', 'timing', 'run', 'pregate', 'ship-receipt', 'gate'])('should print the %s JSON Schema, draft 2020-12', (name) => {
    const result = laneward(['artifact', 'schema', name]);
    expect(result.code).toBe(0);
    const schema = JSON.parse(result.stdout);
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(schema.title).toBe(name);
    expect(schema.type).toBe('object');
    expect(schema.required).toContain('schema_version');
  });
});

describe('laneward artifact ack', () => {
  test('should record a consumer once, atomically, and keep the run valid', () => {
    const dir = run('ack');
    const first = laneward(['artifact', 'ack', dir, '--consumer', 'queue-1']);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/^ACK: run=run1 consumer=queue-1 at=\d{4}-\d\d-\d\dT[\d:.]+Z\n$/);
    const second = laneward(['artifact', 'ack', join(dir, 'run.json'), '--consumer', 'queue-1', '--json']);
    expect(second.code).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ acked: true, already: true, consumer: 'queue-1' });
    expect(readManifest(dir)['consumed_by']).toHaveLength(1);
    expect(readdirSync(dir).filter((name) => name.includes('.tmp') || name.endsWith('.lock'))).toEqual([]);
    expect(laneward(['artifact', 'validate', dir]).code).toBe(0);
  });

  test('should refuse an invalid run with exit 3 and leave run.json as it was', () => {
    const dir = run('ack-invalid', CATALOGUE.find((v) => v.name === 'file-edited')!.apply);
    const before = readFileSync(join(dir, 'run.json'));
    const result = laneward(['artifact', 'ack', dir, '--consumer', 'queue-1']);
    expect(result.code).toBe(3);
    expect(codesOf(result.stderr)).toEqual(['ARTIFACT_STALE', 'ACK_REFUSED']);
    expect(readFileSync(join(dir, 'run.json'))).toEqual(before);
  });
});

describe('laneward artifact urgent', () => {
  test('should print the URGENT block of a findings file', () => {
    const dir = run('urgent');
    expect(laneward(['artifact', 'urgent', join(dir, 'findings.jsonl')]).stdout.split('\n')[0]).toBe('## URGENT, outside this plan');
    const lines = laneward(['artifact', 'urgent', join(dir, 'findings.jsonl')]).stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(/^- \[(Critical|High|Medium|Low|Informational)\] .+ \(run1-ceo-outside-1; suggested owner: security\)$/);
  });

  test('should leave a row that fails its schema out of the block and exit 1', () => {
    const dir = run('urgent-invalid');
    const path = join(dir, 'findings.jsonl');
    writeFileSync(path, `${readFileSync(path, 'utf8')}{"schema_version":1,"run":"run1","id":"run1-x-robot-1","phase":"x","voice":"robot","title":"Bad row","urgent":true}\n`);
    const result = laneward(['artifact', 'urgent', path]);
    expect(result.code).toBe(1);
    expect(result.stdout).not.toContain('Bad row');
    expect(new Set(codesOf(result.stderr))).toEqual(new Set(['ARTIFACT_SCHEMA']));
  });

  test('should print None. when nothing is urgent', () => {
    const dir = run('urgent-none');
    const path = join(dir, 'findings.jsonl');
    writeFileSync(path, readFileSync(path, 'utf8').replaceAll('"urgent":true', '"urgent":false'));
    expect(laneward(['artifact', 'urgent', path])).toEqual({ code: 0, stdout: 'None.\n', stderr: '' });
  });
});

test.each(Object.keys(RESULT_CODES) as ResultCode[])('the renderer writes %s in the one line format tests grep', (code) => {
  // Rendered by the product's own renderer, with an input that carries line breaks and
  // parentheses: the pattern must find exactly this code, and the line must stay one line.
  const line = renderIssueLine('laneward artifact validate', issue(code, 'run.json.phases (x)', 'detail\nwith (a) break'));
  expect(line).not.toContain('\n');
  expect(ERROR_LINE.exec(line)?.[1]).toBe(code);
});

describe('laneward demo', () => {
  test('should refuse to generate into a directory it did not make, and leave it as it was', () => {
    const dir = join(root, 'not-an-archive');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'notes.txt'), 'keep me');
    const result = laneward(['demo', 'archive', '--dir', dir, '--runs', '3']);
    expect(result.code).toBe(2);
    expect(codesOf(result.stderr)).toEqual(['USAGE']);
    expect(readdirSync(dir)).toEqual(['notes.txt']);
  });

  test('should generate an archive once, then validate it, flagging exactly the planted runs', () => {
    const dir = join(root, 'demo-archive');
    const first = laneward(['demo', 'archive', '--dir', dir, '--runs', '41', '--jobs', '2']);
    expect(first.code).toBe(0);
    expect(first.stdout.trim().split('\n').at(-1)).toMatch(/^ARTIFACT_SUMMARY: runs=41 valid=38 invalid=3 /);
    const again = laneward(['demo', 'archive', '--dir', dir, '--runs', '41', '--json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout.trim().split('\n').at(-1)!).summary).toMatchObject({ runs: 41, valid: 38, invalid: 3 });
  });
});
