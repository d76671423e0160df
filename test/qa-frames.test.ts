import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { readFrames } from '../main/qa/frames.ts';
import { tempRoot } from './helpers/tmp.ts';

// The observer can write its own call folder: whatever it plants at its stdout copy gives
// no frames, never a hang, a huge read or replaced bytes.
describe('readFrames', () => {
  const root = tempRoot('qa-frames');
  const line = `${JSON.stringify({ type: 'assistant', message: { content: [{ type: 'text', text: 'looked at it' }] } })}\n`;
  let n = 0;
  const at = () => {
    const dir = join(root, `call-${n++}`);
    mkdirSync(dir);
    return join(dir, 'stdout.jsonl');
  };

  test('should read the frames of a regular stdout copy', () => {
    const file = at();
    writeFileSync(file, line);
    expect(readFrames(file, 'claude-stream-json', 1, 'cadence')).toEqual([{ call: 1, mode: 'cadence', kind: 'text', text: 'looked at it' }]);
  });

  test.each([
    ['a FIFO', (file: string) => execFileSync('mkfifo', [file])],
    ['a symlink to /dev/zero', (file: string) => symlinkSync('/dev/zero', file)],
    ['a symlink to a regular file', (file: string) => {
      writeFileSync(`${file}.real`, line);
      symlinkSync(`${file}.real`, file);
    }],
    ['a directory', (file: string) => mkdirSync(file)],
    ['bytes that are not UTF-8', (file: string) => writeFileSync(file, Buffer.concat([Buffer.from(line), Buffer.from([0xff, 0xfe, 0x0a])]))],
    ['a file over the stdout limit', (file: string) => writeFileSync(file, Buffer.alloc(4 * 1024 * 1024 + 1, 0x61))],
  ])('should give no frames for %s', (_what, plant) => {
    const file = at();
    plant(file);
    expect(readFrames(file, 'claude-stream-json', 1, 'cadence')).toEqual([]);
  });
});
