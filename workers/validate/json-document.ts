import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { errnoCode } from '../../formats/error.ts';
import { issue, type Issue } from '../../formats/issue.ts';
import { MAX_LINE_BYTES } from '../../formats/jsonl-lines.ts';

/**
 * Reads one JSON document (run.json, gate.json, `validate --as` of a JSON schema) through
 * one descriptor: absent or not a regular file is ARTIFACT_MISSING; empty, over 16 MiB or
 * not JSON is ARTIFACT_INVALID_JSON. Opened non-blocking so a FIFO cannot hang it.
 */
export function readJsonDocument(file: string, name: string): { value: unknown } | { issue: Issue } {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    const why = errnoCode(error) === 'ENOENT' ? 'does not exist' : 'cannot be opened';
    return { issue: issue('ARTIFACT_MISSING', name, `${file} ${why}`) };
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return { issue: issue('ARTIFACT_MISSING', name, `${file} is not a regular file`) };
    if (stat.size === 0) return { issue: issue('ARTIFACT_INVALID_JSON', name, 'empty file') };
    if (stat.size > MAX_LINE_BYTES) return { issue: issue('ARTIFACT_INVALID_JSON', name, 'file over 16 MiB') };
    const bytes = Buffer.allocUnsafe(stat.size);
    let read = 0;
    while (read < bytes.length) {
      const n = readSync(fd, bytes, read, bytes.length - read, null);
      if (n === 0) break;
      read += n;
    }
    try {
      return { value: JSON.parse(bytes.toString('utf8', 0, read)) };
    } catch {
      return { issue: issue('ARTIFACT_INVALID_JSON', name, 'not valid JSON') };
    }
  } catch {
    return { issue: issue('ARTIFACT_MISSING', name, `${file} cannot be read`) };
  } finally {
    closeSync(fd);
  }
}
