import { mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { ResultCode } from '../../formats/codes/codes.ts';
import { errnoCode, LanewardError, toError } from '../../formats/codes/error.ts';

/**
 * `mkdir -p` that always ends: finds the nearest ancestor that exists, then makes each
 * missing directory below it once, in order. Node's own recursive mkdir retries a parent
 * it believes it made and loops for ever (at 100% CPU) where mkdir fails with ENOENT
 * although the parent exists (under /proc, /sys); here any mkdir that fails is the end,
 * as a LanewardError of `code` naming the directory and the errno.
 */
export function makeDirs(dir: string, options: { code?: ResultCode; mode?: number } = {}): void {
  const code = options.code ?? 'IO_ERROR';
  const missing: string[] = [];
  let at = resolve(dir);
  for (;;) {
    const stat = statOf(at, code);
    if (stat !== undefined) {
      if (!stat.isDirectory()) throw new LanewardError(code, `cannot create directory ${dir}: ${at} exists and is not a directory`, { path: at });
      break;
    }
    missing.push(at);
    const parent = dirname(at);
    if (parent === at) break;
    at = parent;
  }
  for (const one of missing.reverse()) {
    try {
      mkdirSync(one, options.mode === undefined ? undefined : { mode: options.mode });
    } catch (error) {
      // Made by another process meanwhile: that is progress too.
      if (errnoCode(error) === 'EEXIST' && statOf(one, code)?.isDirectory() === true) continue;
      const why = errnoCode(error) === 'ENOENT' ? 'its parent exists but takes no new directory (a virtual file system such as /proc)' : toError(error).message;
      throw new LanewardError(code, `cannot create directory ${one} (${errnoCode(error) ?? 'error'}): ${why}`, { path: one, cause: error });
    }
  }
}

function statOf(path: string, code: ResultCode) {
  try {
    return statSync(path, { throwIfNoEntry: false });
  } catch (error) {
    throw new LanewardError(code, `cannot create directory ${path}: ${toError(error).message}`, { path, cause: error });
  }
}
