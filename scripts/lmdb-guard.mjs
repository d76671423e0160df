// Builds the lmdb package's native part from source with the open-race guard.
//
// The LMDB that lmdb 3.5.6 ships has `mdb_env_open2` write the shared last-transaction id
// from a meta page it read before taking any lock: a process that opens the environment
// while another commits can put an older id back, and the next writer then starts from
// the old snapshot and overwrites a commit that was already reported. The guard (only a
// previous-snapshot open sets the id there; every other open leaves it to the first
// opener, which sets it under the exclusive lock) is upstream LMDB's own fix.
//
// Run by `npm ci`/`npm install` (postinstall). Idempotent: a build stamped with the
// patched source's hash is kept. The store refuses to open on an unguarded build
// (main/store/lmdb-guard.ts), so a failure here is loud, never a silent prebuilt.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
// The package's exports hide package.json: walk up from its entry to its folder.
let pkgDir = dirname(require.resolve('lmdb'));
while (!existsSync(join(pkgDir, 'binding.gyp'))) {
  if (dirname(pkgDir) === pkgDir) fail('the lmdb package has no binding.gyp');
  pkgDir = dirname(pkgDir);
}
const source = join(pkgDir, 'dependencies/lmdb/libraries/liblmdb/mdb.c');
const stampFile = join(pkgDir, 'build/Release/laneward-guard.json');

const UNGUARDED = '\tif (env->me_txns)\n\t\tenv->me_txns->mti_txnid = meta.mm_txnid;\n';
const GUARDED = '\tif (prev && env->me_txns)\n\t\tenv->me_txns->mti_txnid = meta.mm_txnid;\n';

function fail(message) {
  process.stderr.write(`lmdb-guard: ${message}\n`);
  process.exit(1);
}

let text = readFileSync(source, 'utf8');
const unguarded = text.split(UNGUARDED).length - 1;
if (unguarded > 1) fail(`${source}: the unguarded open is not unique (${unguarded} places); the guard was not applied`);
if (unguarded === 1) {
  text = text.replace(UNGUARDED, GUARDED);
  writeFileSync(source, text);
} else if (!text.includes(GUARDED)) {
  fail(`${source}: neither the unguarded nor the guarded open was found; check the lmdb version`);
}
const hash = createHash('sha256').update(text).digest('hex');
const stamp = JSON.stringify({ guard: 'open-txnid', mdbSha256: hash });
if (existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) {
  process.stdout.write('lmdb-guard: guarded build present\n');
  process.exit(0);
}

const nodeGyp = process.env.npm_config_node_gyp ?? join(dirname(process.execPath), '../lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js');
if (!existsSync(nodeGyp)) fail(`node-gyp not found at ${nodeGyp} (set npm_config_node_gyp)`);
// Headers from the installed node when present: no download (this machine has no network).
const headers = join(dirname(process.execPath), '../include/node/node_api.h');
const args = [nodeGyp, 'rebuild', ...(existsSync(headers) ? [`--nodedir=${join(dirname(process.execPath), '..')}`] : [])];
const started = Date.now();
try {
  // The compiler's warnings are the package's, not ours: shown only when the build fails.
  execFileSync(process.execPath, args, { cwd: pkgDir, stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 ** 2 });
} catch (error) {
  const tail = String(error.stderr ?? '').split('\n').slice(-30).join('\n');
  fail(`node-gyp rebuild in ${pkgDir} failed (${error.status ?? error.signal}); gcc, make and python3 are needed\n${tail}`);
}
writeFileSync(stampFile, stamp);
process.stdout.write(`lmdb-guard: built the guarded LMDB in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
