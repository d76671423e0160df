import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { describe, expect, test } from 'vitest';
import { MAX_ARTIFACT_FILES, packRunDir, unpackRunDir, type CarriedFile } from '../main/queue/run-dir-transfer.ts';
import { codeOf } from './helpers/thrown.ts';
import { tempRoot } from './helpers/tmp.ts';

const root = tempRoot('run-dir-transfer');
const b64 = (text: string) => Buffer.from(text).toString('base64');


describe('a run directory carried back', () => {
  test('should carry regular files only: a symlink, a FIFO and the worktree are left out, never read', () => {
    const dir = mkdtempSync(join(root, 'pack-'));
    writeFileSync(join(dir, 'run.json'), '{}');
    mkdirSync(join(dir, 'sub'));
    writeFileSync(join(dir, 'sub', 'a.jsonl'), 'x\n');
    symlinkSync('/etc/passwd', join(dir, 'link'));
    expect(spawnSync('mkfifo', [join(dir, 'fifo')]).status).toBe(0);
    mkdirSync(join(dir, 'worktree'));
    writeFileSync(join(dir, 'worktree', 'big'), 'y');
    expect(packRunDir(dir).map((f) => f.path)).toEqual(['run.json', 'sub/a.jsonl']);
  });

  test('should refuse a directory over its byte bound or its file bound (RUN_DIR_TOO_LARGE)', () => {
    const dir = mkdtempSync(join(root, 'big-'));
    writeFileSync(join(dir, 'a'), Buffer.alloc(2048));
    expect(codeOf(() => packRunDir(dir, 1024))).toBe('RUN_DIR_TOO_LARGE');
    const many: CarriedFile[] = Array.from({ length: MAX_ARTIFACT_FILES + 1 }, (_, i) => ({ path: `f${i}`, data: '' }));
    expect(codeOf(() => unpackRunDir(many, join(root, 'many')))).toBe('RUN_DIR_TOO_LARGE');
    expect(codeOf(() => unpackRunDir([{ path: 'a', data: 'A'.repeat(4096) }], join(root, 'over'), 1024))).toBe('RUN_DIR_TOO_LARGE');
  });

  test.each([
    ['an absolute path', [{ path: '/etc/x', data: b64('x') }]],
    ['a path that leaves', [{ path: '../x', data: b64('x') }]],
    ['a path that leaves midway', [{ path: 'a/../../x', data: b64('x') }]],
    ['a backslash', [{ path: 'a\\b', data: b64('x') }]],
    ['a NUL', [{ path: 'a\0b', data: b64('x') }]],
    ['an empty path', [{ path: '', data: b64('x') }]],
    ['a doubled slash', [{ path: 'a//b', data: b64('x') }]],
    ['the same path twice', [{ path: 'a', data: b64('1') }, { path: 'a', data: b64('2') }]],
    ['a file that is also a directory', [{ path: 'a', data: b64('1') }, { path: 'a/b', data: b64('2') }]],
    ['a directory that is also a file', [{ path: 'a/b', data: b64('1') }, { path: 'a', data: b64('2') }]],
    ['not a file object', [null]],
    ['a path that is not a string', [{ path: 7, data: b64('x') }]],
  ])('should refuse %s as JOB_INVALID and write nothing, the earlier copy kept', (_, files) => {
    const dest = mkdtempSync(join(root, 'dest-'));
    writeFileSync(join(dest, 'run.json'), 'earlier');
    expect(codeOf(() => unpackRunDir(files as CarriedFile[], dest))).toBe('JOB_INVALID');
    expect(readFileSync(join(dest, 'run.json'), 'utf8')).toBe('earlier');
    expect(readdirSync(root).filter((name) => name.includes('.incoming-'))).toEqual([]);
  });

  test('should replace the earlier copy whole, in one rename', () => {
    const dest = join(root, 'whole');
    mkdirSync(dest);
    writeFileSync(join(dest, 'stale.jsonl'), 'old');
    unpackRunDir([{ path: 'run.json', data: b64('{"a":1}') }, { path: 'sub/x.jsonl', data: b64('x\n') }], dest);
    expect(readdirSync(dest).sort()).toEqual(['run.json', 'sub']);
    expect(readFileSync(join(dest, 'sub', 'x.jsonl'), 'utf8')).toBe('x\n');
    expect(existsSync(join(dest, 'stale.jsonl'))).toBe(false);
  });
});
