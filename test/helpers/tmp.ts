import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

/** A fresh temp directory for one test file, removed when the file's tests end. */
export function tempRoot(prefix: string): string {
  const root = mkdtempSync(join(tmpdir(), `laneward-${prefix}-`));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  return root;
}
