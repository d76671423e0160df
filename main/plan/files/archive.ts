import { writeFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { readRunFile } from '../../fs/run-file.ts';

/**
 * Keeps a copy of a reopened phase's prompts and consensus as `<name>.r<rev><ext>`, or
 * `<name>.r<rev>.v<k><ext>` when that name holds other bytes. Copies, never moves, so a
 * crash before the revise commits leaves every current file in place, and copying again
 * finds the same bytes and writes nothing.
 */
export function archiveFiles(runDir: string, names: readonly string[], rev: number): string[] {
  const kept: string[] = [];
  for (const name of names) {
    // Read bounded, regular files only: a FIFO or a /dev/zero link at a name is refused.
    const bytes = readRunFile(join(runDir, name));
    if (bytes === undefined) continue;
    const ext = extname(name);
    const stem = name.slice(0, name.length - ext.length);
    for (let k = 1; ; k++) {
      const target = `${stem}.r${rev}${k === 1 ? '' : `.v${k}`}${ext}`;
      const path = join(runDir, target);
      const there = readRunFile(path);
      if (there === undefined) {
        // Exclusive: a name that appeared since is never written through.
        writeFileSync(path, bytes, { flag: 'wx', mode: 0o644 });
        kept.push(target);
        break;
      }
      if (there.equals(bytes)) break;
    }
  }
  return kept;
}
