import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { extname, join } from 'node:path';

/**
 * Keeps a copy of a reopened phase's prompts and consensus as `<name>.r<rev><ext>`, or
 * `<name>.r<rev>.v<k><ext>` when that name holds other bytes. Copies, never moves, so a
 * crash before the revise commits leaves every current file in place, and copying again
 * finds the same bytes and writes nothing.
 */
export function archiveFiles(runDir: string, names: readonly string[], rev: number): string[] {
  const kept: string[] = [];
  for (const name of names) {
    const from = join(runDir, name);
    if (!existsSync(from)) continue;
    const bytes = readFileSync(from);
    const ext = extname(name);
    const stem = name.slice(0, name.length - ext.length);
    for (let k = 1; ; k++) {
      const target = `${stem}.r${rev}${k === 1 ? '' : `.v${k}`}${ext}`;
      const path = join(runDir, target);
      if (!existsSync(path)) {
        copyFileSync(from, path);
        kept.push(target);
        break;
      }
      if (readFileSync(path).equals(bytes)) break;
    }
  }
  return kept;
}
