import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The single-thread baseline a batch is compared with: read every file of every run
 * directory, hash it, and JSON.parse it (JSONL line by line). No schema, no ids.
 */
export function readHashParse(runDirs: readonly string[]): number {
  let bytes = 0;
  for (const dir of runDirs) {
    for (const name of readdirSync(dir)) {
      const data = readFileSync(join(dir, name));
      bytes += data.length;
      createHash('sha256').update(data).digest('hex');
      if (name.endsWith('.jsonl')) {
        for (const row of data.toString('utf8').split('\n')) if (row !== '') JSON.parse(row);
      } else if (name.endsWith('.json')) {
        JSON.parse(data.toString('utf8'));
      }
    }
  }
  return bytes;
}
