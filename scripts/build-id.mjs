// The build id: a hash of every source file the bundles are made of. Shared by the build
// (which stamps it into every bundle and writes dist/build-id) and the test helper (which
// rebuilds when dist/ was built from other sources).
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

export const SOURCE_DIRS = ['main', 'workers', 'formats', 'fixtures', 'bench'];
const BUILD_FILES = ['scripts/build.mjs', 'scripts/bundle-options.mjs', 'scripts/cached-start.cjs'];

/** Same sources, same id. */
export function buildId(root) {
  const hash = createHash('sha256');
  const walk = (dir) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.ts')) hash.update(path.slice(root.length)).update(readFileSync(path));
    }
  };
  for (const dir of SOURCE_DIRS) walk(join(root, dir));
  // The recipe too: a dist/ laid out by another build script is stale.
  for (const file of BUILD_FILES) hash.update(file).update(readFileSync(join(root, file)));
  return hash.digest('hex').slice(0, 16);
}
