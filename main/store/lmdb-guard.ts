import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { LanewardError } from '../../formats/codes/error.ts';

/**
 * The LMDB that the lmdb package ships lets a process that opens the environment put an
 * older last-transaction id back while another commits; the next writer then overwrites a
 * commit already reported. `scripts/lmdb-guard.mjs` (run by `npm ci`) builds the package's
 * native part with the guard and stamps the build. A store that loaded the unguarded
 * prebuilt binary could lose commits silently, so opening one is refused instead.
 */
export function assertGuardedLmdb(load: NodeRequire): void {
  const pkg = packageDir(load.resolve('lmdb'));
  const loader = createRequire(join(pkg, 'package.json'))('node-gyp-build-optional-packages') as { path(dir: string): string };
  let binary: string;
  try {
    binary = loader.path(pkg);
  } catch {
    binary = '(none)';
  }
  const release = join(pkg, 'build', 'Release');
  const stamp = join(release, 'laneward-guard.json');
  if (dirname(binary) === release && existsSync(stamp) && isGuardStamp(readFileSync(stamp, 'utf8'))) return;
  throw new LanewardError(
    'STATE_UNAVAILABLE',
    `${binary}: this LMDB build lacks the open-race guard that keeps concurrent commits; run \`node scripts/lmdb-guard.mjs\` (npm ci runs it)`,
    { path: binary },
  );
}

function packageDir(entry: string): string {
  let dir = dirname(entry);
  while (!existsSync(join(dir, 'binding.gyp'))) {
    const up = dirname(dir);
    if (up === dir) return dirname(entry);
    dir = up;
  }
  return dir;
}

function isGuardStamp(text: string): boolean {
  try {
    const stamp = JSON.parse(text) as { guard?: unknown; beginChecked?: unknown };
    return stamp.guard === 'open-txnid' && stamp.beginChecked === true;
  } catch {
    return false;
  }
}
