import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../fs/atomic-write.ts';

/**
 * `<cacheDir>/installed.json`: preset -> the version an install finished and verified.
 * npm leaves a half-written node_modules when it is killed, and a half-extracted package
 * can still answer --version; so a cached CLI counts only once its install has ended, been
 * checked and recorded here. An install drops its presets' entries before npm starts.
 */
const RECORD = 'installed.json';

export function readInstalled(cacheDir: string): Readonly<Record<string, string>> {
  let text: string;
  try {
    text = readFileSync(join(cacheDir, RECORD), 'utf8');
  } catch {
    return {}; // no install has finished here
  }
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {};
    return Object.fromEntries(Object.entries(parsed).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
  } catch {
    return {}; // written atomically, so unreadable means foreign: trust nothing in it
  }
}

export function writeInstalled(cacheDir: string, record: Readonly<Record<string, string>>): void {
  writeFileAtomic(join(cacheDir, RECORD), `${JSON.stringify(record, null, 2)}\n`);
}
