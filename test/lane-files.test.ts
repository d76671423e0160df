import { spawnSync } from 'node:child_process';
import { linkSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { readRunBytes, readRunFiles } from '../main/console/run-files.ts';
import { tempRoot } from './helpers/tmp.ts';

// A run directory is written by children laneward does not trust: its listing for the
// lane page reads only what is plainly inside it, bounded, and never blocks.

const root = tempRoot('lane-files');
let serial = 0;

function runDir(): string {
  const dir = join(root, `run-${++serial}`);
  mkdirSync(dir);
  return dir;
}

const byPath = (files: ReturnType<typeof readRunFiles>['files']) => new Map(files.map((f) => [f.path, f]));

describe('readRunFiles', () => {
  test('should list a hostile directory without following, opening or blocking on what is not a plain file inside it', () => {
    const dir = runDir();
    writeFileSync(join(dir, 'markup.md'), 'a <script>alert(1)</script> and </pre><b>x</b>\n');
    symlinkSync('/etc/passwd', join(dir, 'passwd'));
    symlinkSync('/etc', join(dir, 'etc'));
    writeFileSync(join(dir, 'big.log'), Buffer.alloc(5 * 1024 * 1024, 'a'));
    writeFileSync(join(dir, 'nul.bin'), Buffer.from([0x61, 0x00, 0x62]));
    writeFileSync(join(dir, 'latin1.txt'), Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
    expect(spawnSync('mkfifo', [join(dir, 'pipe')]).status).toBe(0);
    writeFileSync(join(dir, 'a\n<b>.txt'), 'named badly\n');
    mkdirSync(join(dir, 'worktree'));
    writeFileSync(join(dir, 'worktree', 'secret.txt'), 'never listed\n');
    mkdirSync(join(dir, 'agent'));
    writeFileSync(join(dir, 'agent', 'turn-1.json'), '{"text":"t","diff":false,"finish":false}');

    const { files, leftOut } = readRunFiles(dir);
    expect(files.map((f) => f.path)).toEqual(['a\n<b>.txt', 'agent/turn-1.json', 'big.log', 'etc', 'latin1.txt', 'markup.md', 'nul.bin', 'passwd', 'pipe']);
    expect(leftOut).toEqual({ count: 0, exact: true });
    const at = byPath(files);
    expect(at.get('markup.md')).toEqual({ path: 'markup.md', bytes: 47, text: 'a <script>alert(1)</script> and </pre><b>x</b>\n', truncated: false });
    expect(at.get('passwd')).toMatchObject({ text: null, truncated: false, skipped: 'symlink' });
    expect(at.get('etc')).toMatchObject({ text: null, skipped: 'symlink' });
    const big = at.get('big.log')!;
    expect([big.bytes, big.text?.length, big.truncated, big.skipped]).toEqual([5 * 1024 * 1024, 64 * 1024, true, undefined]);
    expect(at.get('nul.bin')).toMatchObject({ bytes: 3, text: null, skipped: 'binary' });
    expect(at.get('latin1.txt')).toMatchObject({ bytes: 5, text: null, skipped: 'binary' });
    expect(at.get('pipe')).toMatchObject({ bytes: 0, text: null, skipped: 'special' });
    expect(at.get('a\n<b>.txt')).toEqual({ path: 'a\n<b>.txt', bytes: 12, text: 'named badly\n', truncated: false });
    // Nothing of what the links point at was read.
    expect(files.some((f) => f.text?.includes('root:') === true)).toBe(false);
  });

  test('should list the first 200 of 1,000 files by path and count the 800 left out', () => {
    const dir = runDir();
    for (let i = 0; i < 1000; i++) writeFileSync(join(dir, `f${String(i).padStart(4, '0')}.txt`), `${i}\n`);
    const { files, leftOut } = readRunFiles(dir);
    expect(files).toHaveLength(200);
    expect([files[0]!.path, files[199]!.path, files[199]!.text]).toEqual(['f0000.txt', 'f0199.txt', '199\n']);
    expect(leftOut).toEqual({ count: 800, exact: true });
  });

  test('should show at most 1 MiB of text in all: the files past it are listed without text', () => {
    const dir = runDir();
    for (let i = 0; i < 20; i++) writeFileSync(join(dir, `part-${String(i).padStart(2, '0')}.txt`), Buffer.alloc(100 * 1024, 'x'));
    const { files } = readRunFiles(dir);
    expect(files.map((f) => [f.text?.length ?? null, f.truncated, f.skipped ?? null])).toEqual([
      ...Array.from({ length: 16 }, () => [64 * 1024, true, null]),
      ...Array.from({ length: 4 }, () => [null, false, 'budget']),
    ]);
  });

  test('should cut a truncated text before a character split by the bound, not call it binary', () => {
    const dir = runDir();
    // 'é' is two bytes: the 65,536th byte is the first half of one.
    writeFileSync(join(dir, 'accents.txt'), `${'a'.repeat(64 * 1024 - 1)}${'é'.repeat(10)}`);
    const [file] = readRunFiles(dir).files;
    expect([file!.truncated, file!.skipped, file!.text!.length]).toEqual([true, undefined, 64 * 1024 - 1]);
  });

  test('should stop the walk at its bound and say the count left out is a lower bound', () => {
    const dir = runDir();
    for (let i = 0; i < 30; i++) writeFileSync(join(dir, `g${String(i).padStart(2, '0')}`), '');
    expect(readRunFiles(dir, { maxEntries: 25, maxFiles: 10 }).leftOut).toEqual({ count: 15, exact: false });
  });

  test('should never read a file a path inside the directory leads out to (a directory on its way is a link out)', () => {
    const dir = runDir();
    const outside = join(root, `outside-${serial}`);
    mkdirSync(outside);
    writeFileSync(join(outside, 'secret.txt'), 'outside\n');
    symlinkSync(outside, join(dir, 'out'));
    writeFileSync(join(dir, 'inside.txt'), 'inside\n');
    expect(readRunBytes(dir, 'out/secret.txt', 1024)).toBe(null);
    expect(readRunBytes(dir, 'inside.txt', 1024)?.toString()).toBe('inside\n');
    expect(readRunBytes(dir, 'inside.txt', 3)).toBe(null);
  });

  test('should list a file with more than one link without its text, and never read one (a hard link may name a file outside)', () => {
    const dir = runDir();
    const outside = join(root, `secret-${serial}.txt`);
    writeFileSync(outside, 'root:$6$hash:19000:0:99999:7:::\n');
    linkSync(outside, join(dir, 'shadow'));
    mkdirSync(join(dir, 'agent'));
    linkSync(outside, join(dir, 'agent', 'turn-1.json'));
    writeFileSync(join(dir, 'plain.txt'), 'plain\n');
    const files = byPath(readRunFiles(dir).files);
    expect(files.get('shadow')).toEqual({ path: 'shadow', bytes: 32, text: null, truncated: false, skipped: 'linked' });
    expect(files.get('agent/turn-1.json')?.skipped).toBe('linked');
    expect(files.get('plain.txt')?.text).toBe('plain\n');
    expect(readRunBytes(dir, 'shadow', 1024)).toBe(null);
    expect(readRunBytes(dir, 'agent/turn-1.json', 1024)).toBe(null);
    expect(readRunBytes(dir, 'plain.txt', 1024)?.toString()).toBe('plain\n');
  });

  test('should list nothing for a run directory that does not exist', () => {
    expect(readRunFiles(join(root, 'absent'))).toEqual({ files: [], leftOut: { count: 0, exact: true } });
  });
});
