import { lstatSync, realpathSync } from 'node:fs';
import { isAbsolute, join, sep } from 'node:path';
import { errnoCode } from '../../formats/codes/error.ts';
import type { ResultCode } from '../../formats/codes/codes.ts';

export type Resolved =
  | { readonly ok: true; readonly file: string }
  | { readonly ok: false; readonly code: ResultCode; readonly message: string };

/**
 * Resolves an artifact path from run.json inside its run directory. The path is refused
 * before touching the disk when it is absolute or has a `..` segment; after that, its
 * real path (symlinks followed) must still lie inside the run directory's real path.
 * The caller reads the file through one descriptor and refuses anything but a regular
 * file there, so nothing is checked twice and nothing swapped in between is trusted.
 */
export function resolveInRunDir(runDir: string, runDirReal: string, relPath: string): Resolved {
  if (relPath === '' || isAbsolute(relPath) || relPath.split(/[\\/]/).includes('..')) {
    return { ok: false, code: 'ARTIFACT_PATH_ESCAPE', message: `path ${JSON.stringify(relPath)} is not relative to the run directory` };
  }
  const file = join(runDir, relPath);
  // Hint: a plain file named directly in the run directory (the usual artifact) is inside
  // it by construction; one lstat proves that, where realpath lstats every component of
  // the absolute path. Anything else (a symlink, a nested path) takes the full check.
  if (relPath !== '.' && !/[\\/]/.test(relPath)) {
    try {
      const stat = lstatSync(file);
      if (!stat.isSymbolicLink()) return { ok: true, file: join(runDirReal, relPath) };
    } catch (error) {
      if (errnoCode(error) === 'ENOENT') return { ok: false, code: 'ARTIFACT_MISSING', message: `${relPath} does not exist` };
    }
  }
  let real: string;
  try {
    // Hint: the native realpath is one libc call; the JS one lstats every path component.
    real = realpathSync.native(file);
  } catch (error) {
    const why = errnoCode(error) === 'ELOOP' ? 'is a symlink loop' : 'does not exist';
    return { ok: false, code: 'ARTIFACT_MISSING', message: `${relPath} ${why}` };
  }
  if (real === runDirReal) return { ok: false, code: 'ARTIFACT_MISSING', message: `${relPath} is the run directory, not a file` };
  if (!real.startsWith(runDirReal + sep)) {
    return { ok: false, code: 'ARTIFACT_PATH_ESCAPE', message: `${relPath} resolves outside the run directory` };
  }
  // Whether it is a regular file is checked on the open descriptor by whoever reads it.
  return { ok: true, file: real };
}
