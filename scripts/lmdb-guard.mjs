// Builds the lmdb package's native part from source with the open-race guard, and with
// write transactions whose begin failed reported as errors.
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
const binding = join(pkgDir, 'src/env.cpp');
const stampFile = join(pkgDir, 'build/Release/laneward-guard.json');

const UNGUARDED = '\tif (env->me_txns)\n\t\tenv->me_txns->mti_txnid = meta.mm_txnid;\n';
const GUARDED = '\tif (prev && env->me_txns)\n\t\tenv->me_txns->mti_txnid = meta.mm_txnid;\n';

function fail(message) {
  process.stderr.write(`lmdb-guard: ${message}\n`);
  process.exit(1);
}

const UNCHECKED = '\t\t\tmdb_txn_begin(env, nullptr, flags & 0xf0000, &txn);\n\t\t\tflags |= TXN_ABORTABLE;\n';
const CHECKED =
  '\t\t\tint rc = mdb_txn_begin(env, nullptr, flags & 0xf0000, &txn);\n' +
  '\t\t\tif (rc) {\n\t\t\t\tpthread_mutex_unlock(this->writingLock);\n\t\t\t\treturn throwLmdbError(info.Env(), rc);\n\t\t\t}\n' +
  '\t\t\tflags |= TXN_ABORTABLE;\n';

/** Replaces `before` by `after` in `file` once, unless it is patched already. */
function patch(file, before, after, what) {
  let text = readFileSync(file, 'utf8');
  const found = text.split(before).length - 1;
  if (found > 1) fail(`${file}: ${what} is not unique (${found} places); nothing was patched`);
  if (found === 1) {
    text = text.replace(before, after);
    writeFileSync(file, text);
  } else if (!text.includes(after)) {
    fail(`${file}: ${what} was found neither unpatched nor patched; check the lmdb version`);
  }
}

// A failed open freed the environment's extended state, then closeEnv used it and freed it
// again: every open that LMDB refused (a file that is not an environment, ENOSPC) was a
// SIGSEGV instead of an error. Freed once now: by closeEnv, or here when no close follows.
const DOUBLE_FREE =
  '\tif (rc != 0) {\n\t\t#ifdef MDB_OVERLAPPINGSYNC\n\t\tdelete extended_env;\n\t\t#endif\n\t\tif (rc == EXISTING_ENV_FOUND) {\n\t\t\tmdb_env_close(env);\n';
const FREED_ONCE =
  '\tif (rc != 0) {\n\t\tif (rc == EXISTING_ENV_FOUND) {\n\t\t\t#ifdef MDB_OVERLAPPINGSYNC\n\t\t\tdelete extended_env;\n\t\t\t#endif\n\t\t\tmdb_env_close(env);\n';
// LMDB prints some failures to stderr as well as returning them ("Write error: ..." with
// no line break, glued to the front of laneward's error line on a full disk). Each is
// returned as an error, which laneward prints on its one line: the prints go nowhere.
const LOUD = '#include "lmdb.h"\n#include "midl.h"\n';
const QUIET =
  '#include "lmdb.h"\n' +
  '/* laneward: every failure is returned as an error; nothing is printed to stderr. */\n' +
  '#define fprintf(stream, ...) ((stream) == stderr ? 0 : fprintf(stream, __VA_ARGS__))\n' +
  '#include "midl.h"\n';

patch(source, UNGUARDED, GUARDED, 'the open that sets the last transaction id');
patch(source, LOUD, QUIET, "the includes before LMDB's stderr messages");
patch(binding, UNCHECKED, CHECKED, 'the write transaction begin');
patch(binding, DOUBLE_FREE, FREED_ONCE, "the failed open's cleanup");
// The sources as patched, whether just now or by an earlier run: the build they make.
const hash = createHash('sha256').update(readFileSync(source)).update(readFileSync(binding)).digest('hex');
const stamp = JSON.stringify({ guard: 'open-txnid', beginChecked: true, openFreesOnce: true, quiet: true, sourcesSha256: hash });
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
