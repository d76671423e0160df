import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { errnoCode } from '../../formats/codes/error.ts';
import { issue, type Issue } from '../../formats/codes/issue.ts';
import { MAX_LINE_BYTES } from '../../formats/jsonl/lines.ts';

export type JsonDocument = { value: unknown; bytes: Buffer } | { issue: Issue };

/**
 * Reads one JSON document (run.json, gate.json, `validate --as` of a JSON schema) through
 * one descriptor: absent or not a regular file is ARTIFACT_MISSING; empty, over 16 MiB,
 * not UTF-8 or not JSON is ARTIFACT_INVALID_JSON. Opened non-blocking so a FIFO cannot
 * hang it. `noFollow` refuses a symlink at the last path component (ELOOP).
 */
export function readJsonDocument(file: string, name: string, options: { noFollow?: boolean } = {}): JsonDocument {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | (options.noFollow === true ? constants.O_NOFOLLOW : 0));
  } catch (error) {
    const code = errnoCode(error);
    const why = code === 'ENOENT' ? 'does not exist' : code === 'ELOOP' ? 'is a symlink (or a symlink loop)' : 'cannot be opened';
    return { issue: issue('ARTIFACT_MISSING', name, `${file} ${why}`) };
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return { issue: issue('ARTIFACT_MISSING', name, `${file} is not a regular file`) };
    if (stat.size > MAX_LINE_BYTES) return { issue: issue('ARTIFACT_INVALID_JSON', name, 'file over 16 MiB') };
    const bytes = Buffer.allocUnsafe(stat.size);
    let read = 0;
    while (read < bytes.length) {
      const n = readSync(fd, bytes, read, bytes.length - read, null);
      if (n === 0) break;
      read += n;
    }
    return parseJsonDocument(bytes.subarray(0, read), name);
  } catch {
    return { issue: issue('ARTIFACT_MISSING', name, `${file} cannot be read`) };
  } finally {
    closeSync(fd);
  }
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The document in `bytes`: the value and the very bytes it was parsed from, or why not. */
export function parseJsonDocument(bytes: Buffer, name: string): JsonDocument {
  if (bytes.length === 0) return { issue: issue('ARTIFACT_INVALID_JSON', name, 'empty file') };
  if (bytes.length > MAX_LINE_BYTES) return { issue: issue('ARTIFACT_INVALID_JSON', name, 'file over 16 MiB') };
  let text: string;
  try {
    // JSON text is UTF-8 (RFC 8259); undecodable bytes are refused, never replaced.
    text = UTF8.decode(bytes);
  } catch {
    return { issue: issue('ARTIFACT_INVALID_JSON', name, 'not valid UTF-8') };
  }
  try {
    return { value: JSON.parse(text), bytes };
  } catch {
    return { issue: issue('ARTIFACT_INVALID_JSON', name, 'not valid JSON') };
  }
}
