import { execFileSync } from 'node:child_process';
import { lstatSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { readPosition, writePosition } from '../main/queue/lane-position.ts';
import { tempRoot } from './helpers/tmp.ts';

// A lane's mirror position is a hint under the worker's state root: whatever stands at its
// path, a write never follows it elsewhere or blocks, and a read that finds anything but
// the worker's own record finds the position lost (the lane then restores from its stream).

const root = tempRoot('lane-position');
let n = 0;
const laneDir = () => {
  const dir = join(root, `lane-${++n}`);
  mkdirSync(dir);
  return dir;
};

describe('lane position', () => {
  test('should read back what was written, a shorter id after a longer one included, and none before any write', () => {
    const dir = laneDir();
    expect(readPosition(dir)).toBeNull();
    writePosition(dir, '1733140000000-12345');
    expect(readPosition(dir)).toBe('1733140000000-12345');
    writePosition(dir, '0-1');
    expect(readPosition(dir)).toBe('0-1');
    expect(readFileSync(join(dir, 'mirrored')).length).toBe(64);
  });

  test('should replace a symlink at its path, never writing through it', () => {
    const dir = laneDir();
    const target = join(root, `target-${n}`);
    writeFileSync(target, 'not yours\n');
    symlinkSync(target, join(dir, 'mirrored'));
    expect(readPosition(dir)).toBeNull();
    writePosition(dir, '5-0');
    expect(readFileSync(target, 'utf8')).toBe('not yours\n');
    expect(lstatSync(join(dir, 'mirrored')).isFile()).toBe(true);
    expect(readPosition(dir)).toBe('5-0');
  });

  test('should neither block on a FIFO at its path nor read it as a position', () => {
    const dir = laneDir();
    execFileSync('mkfifo', [join(dir, 'mirrored')]);
    expect(readPosition(dir)).toBeNull();
    writePosition(dir, '7-0');
    expect(readPosition(dir)).toBe('7-0');
  });

  test('should take a directory or a huge file at its path as no position, lose the write into a directory without throwing, and cut a huge file to its record', () => {
    const dir = laneDir();
    mkdirSync(join(dir, 'mirrored'));
    expect(readPosition(dir)).toBeNull();
    expect(() => writePosition(dir, '9-0')).not.toThrow();
    expect(readPosition(dir)).toBeNull();
    const big = laneDir();
    writeFileSync(join(big, 'mirrored'), 'x'.repeat(1 << 20));
    expect(readPosition(big)).toBeNull();
    // Written over, it is the record again.
    writePosition(big, '11-0');
    expect(readPosition(big)).toBe('11-0');
    expect(readFileSync(join(big, 'mirrored')).length).toBe(64);
  });
});
