import { realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, normalize } from 'node:path';
import { errnoCode } from '../../formats/codes/error.ts';
import { issue } from '../../formats/codes/issue.ts';
import { IssueList } from '../../formats/schemas/issue-list.ts';
import { MAX_LINE_BYTES } from '../../formats/jsonl/lines.ts';
import { checkSchema } from '../../formats/schemas/check.ts';
import { decisionSchema } from '../../formats/schemas/decisions.ts';
import { findingSchema } from '../../formats/schemas/findings.ts';
import { runSchema, type RunManifest } from '../../formats/schemas/run.ts';
import { taskSchema } from '../../formats/schemas/tasks.ts';
import { resolveInRunDir } from './containment.ts';
import { readJsonDocument, type JsonDocument } from './json-document.ts';
import { streamFile } from './file-stream.ts';
import { GUARD_TOKEN, scanFor } from './guard-line.ts';
import { checkJsonlFile, type JsonlResult } from './jsonl-artifact.ts';
import type { RunReport } from './report.ts';
import { checkCounts } from './run-counts.ts';
import { checkPhases } from './run-phases.ts';
import { checkReferences, emptyTaskRefs, idHook, rowHook } from './task-refs.ts';
import { checkTiming } from './timing-artifact.ts';

const JSONL_KEYS = ['tasks.jsonl', 'findings.jsonl', 'decisions.jsonl'] as const;

/**
 * Where a run lives, from a path to its run.json or to its directory. A path named
 * run.json is the manifest whatever it is: a directory called run.json is a missing
 * manifest, never a run directory to look into.
 */
export function locateRun(target: string): { manifest: string; runDir: string } {
  const clean = normalize(target);
  let isDir = false;
  try {
    isDir = basename(clean) !== 'run.json' && statSync(clean).isDirectory();
  } catch {
    // An absent target is reported by validateRun as a missing run.json.
  }
  const manifest = isDir ? join(clean, 'run.json') : clean;
  return { manifest, runDir: dirname(manifest) };
}

/**
 * Validates one run directory, following the contract step by step: the manifest, then
 * phases and voices, then every artifact (hash, rows, ids), counts, references, cycles
 * and the guard line. Errors after the manifest are collected, never fail-fast.
 */
export function validateRun(target: string, manifestDocument?: JsonDocument): RunReport {
  const { manifest, runDir } = locateRun(target);
  const name = basename(manifest);
  const report = (errors: IssueList, runManifest: RunManifest | undefined, attested = 0): RunReport => ({
    valid: errors.total === 0,
    run: runManifest?.run ?? null,
    status: runManifest?.status ?? null,
    run_dir: runDir,
    errors: errors.items,
    errors_omitted: errors.omitted,
    codes: errors.codes,
    attested,
  });
  const errors = new IssueList();

  // ack hands in the bytes it read under its lock, so the bytes judged are the bytes rewritten.
  const parsed = manifestDocument ?? readJsonDocument(manifest, name);
  if ('issue' in parsed) {
    errors.push(parsed.issue);
    return report(errors, undefined);
  }
  const schemaIssues = checkSchema(runSchema, parsed.value, name);
  if (schemaIssues !== undefined) {
    for (const found of schemaIssues) errors.push(found);
    return report(errors, undefined);
  }
  const runManifest = parsed.value as RunManifest;

  const attested = checkPhases(runManifest, name, errors);
  checkArtifacts(runManifest, runDir, name, errors);
  return report(errors, runManifest, attested);
}

/** Steps 3 to 6: every artifact, then counts, references, cycles and the guard line. */
function checkArtifacts(manifest: RunManifest, runDir: string, name: string, errors: IssueList): void {
  let runDirReal: string;
  try {
    runDirReal = realpathSync.native(runDir);
  } catch {
    errors.push(issue('ARTIFACT_MISSING', name, `run directory ${runDir} cannot be resolved`));
    return;
  }
  const perKey = new Map<string, IssueList>();
  const jsonl = new Map<string, JsonlResult>();
  const refs = emptyTaskRefs();
  let pending = 0;
  let guardSeen: boolean | undefined;
  const unattended = manifest.session_kind === 'unattended';

  // Tasks are read before findings and decisions so the ids they name can be ticked off
  // while those files stream past, instead of keeping every finding id as a string.
  const keys = Object.keys(manifest.artifacts);
  const order = [...JSONL_KEYS.filter((key) => keys.includes(key)), ...keys.filter((key) => !(JSONL_KEYS as readonly string[]).includes(key))];
  for (const key of order) {
    const entry = manifest.artifacts[key]!;
    const found = new IssueList();
    perKey.set(key, found);
    const at = `${name}.artifacts.${key}`;
    const resolved = resolveInRunDir(runDir, runDirReal, entry.path);
    if (!resolved.ok) {
      found.push(issue(resolved.code, `${at}.path`, resolved.message));
      continue;
    }
    try {
      let sha256: string;
      if (key === 'tasks.jsonl' || key === 'findings.jsonl' || key === 'decisions.jsonl') {
        const result = checkJsonlFile(resolved.file, {
          display: entry.path,
          schema: key === 'tasks.jsonl' ? taskSchema : key === 'findings.jsonl' ? findingSchema : decisionSchema,
          runId: manifest.run,
          onRow: rowHook(key, entry.path, refs, () => pending++),
          onValidId: key === 'findings.jsonl' ? idHook(refs.findings) : undefined,
        });
        jsonl.set(key, result);
        found.append(result.issues);
        sha256 = result.sha256;
      } else if (key === 'timing.json') {
        const chunks: Buffer[] = [];
        let size = 0;
        sha256 = streamFile(resolved.file, (chunk) => {
          size += chunk.length;
          if (size <= MAX_LINE_BYTES) chunks.push(Buffer.from(chunk));
        }).sha256;
        for (const timingIssue of checkTiming(Buffer.concat(chunks), size, entry.path, manifest.run)) found.push(timingIssue);
      } else if (key === 'review-record.md' && unattended) {
        const scan = scanFor(resolved.file, GUARD_TOKEN);
        sha256 = scan.sha256;
        guardSeen = scan.seen;
      } else {
        sha256 = streamFile(resolved.file).sha256;
      }
      if (sha256 !== entry.sha256.toLowerCase()) {
        found.push(issue('ARTIFACT_STALE', `${at}.sha256`, `${entry.path} has sha256 ${sha256}, run.json records ${entry.sha256}`));
      }
    } catch (error) {
      // Only a failed read is a missing file; anything else is a defect and must say so.
      if (errnoCode(error) === undefined) throw error;
      found.push(issue('ARTIFACT_MISSING', `${at}.path`, `${entry.path} cannot be read as a file`));
    }
  }
  for (const key of keys) errors.append(perKey.get(key)!);

  checkCounts(manifest, name, jsonl, pending, errors);
  checkReferences(manifest, refs, jsonl, errors);
  if (unattended) {
    if (guardSeen === undefined && !Object.hasOwn(manifest.artifacts, 'review-record.md')) {
      const resolved = resolveInRunDir(runDir, runDirReal, 'review-record.md');
      try {
        if (resolved.ok) guardSeen = scanFor(resolved.file, GUARD_TOKEN).seen;
      } catch {
        // Not a readable file: reported below as a missing guard line.
      }
    }
    if (guardSeen !== true) {
      const why = guardSeen === undefined ? 'review-record.md cannot be read' : 'review-record.md has no GUARD_NOT_INSTALLED line';
      errors.push(issue('ARTIFACT_GUARD_LINE_MISSING', 'review-record.md', why));
    }
  }
}

