import { realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, normalize } from 'node:path';
import { errnoCode } from '../../formats/codes/error.ts';
import { issue, type Issue } from '../../formats/codes/issue.ts';
import { IssueList } from '../../formats/schemas/issue-list.ts';
import { MAX_LINE_BYTES } from '../../formats/jsonl/lines.ts';
import { checkSchema } from '../../formats/schemas/check.ts';
import { decisionSchema } from '../../formats/schemas/decisions.ts';
import { findingSchema } from '../../formats/schemas/findings.ts';
import { runSchema, TERMINAL_RUN_STATUSES, type RunManifest } from '../../formats/schemas/run.ts';
import { taskSchema } from '../../formats/schemas/tasks.ts';
import { timingSchema } from '../../formats/schemas/timing.ts';
import { resolveInRunDir } from './containment.ts';
import { parseJsonDocument, readJsonDocument, type JsonDocument } from './json-document.ts';
import { streamFile } from './file-stream.ts';
import { checkJsonlFile, type JsonlResult } from './jsonl-artifact.ts';
import type { RunReport } from './report.ts';
import { checkTaskGraph, type TaskNode } from './task-graph.ts';

const GUARD_TOKEN = Buffer.from('GUARD_NOT_INSTALLED');
const VOICES = ['native', 'outside'] as const;
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


/** Step 2: the run's status and every required phase's voices. Returns the attested count. */
function checkPhases(manifest: RunManifest, name: string, errors: IssueList): number {
  if (!TERMINAL_RUN_STATUSES.has(manifest.status)) {
    errors.push(issue('ARTIFACT_RUN_INTERRUPTED', `${name}.status`, `status is ${manifest.status}`));
  }
  for (const phase of manifest.required_phases) {
    const record = Object.hasOwn(manifest.phases, phase) ? manifest.phases[phase] : undefined;
    if (record === undefined) {
      errors.push(issue('ARTIFACT_REVIEWER_MISSING', `${name}.phases.${phase}`, `required phase ${phase} has no record`));
      continue;
    }
    for (const voice of VOICES) {
      const outcome = record[voice];
      const at = `${name}.phases.${phase}.${voice}`;
      if (outcome === undefined) {
        errors.push(issue('ARTIFACT_REVIEWER_MISSING', at, `phase ${phase} has no ${voice} voice outcome`));
      } else if (outcome.status === 'pending' || outcome.status === 'running') {
        errors.push(issue('ARTIFACT_RUN_INTERRUPTED', `${at}.status`, `voice is ${outcome.status}`));
      } else if (outcome.status === 'completed') {
        const key = outcome.output ?? `${phase}-${voice}.md`;
        if (!Object.hasOwn(manifest.artifacts, key)) {
          errors.push(issue('ARTIFACT_REVIEWER_MISSING', at, `completed voice output ${key} is not in artifacts`));
        }
      }
    }
  }
  let attested = 0;
  for (const record of Object.values(manifest.phases)) {
    for (const voice of VOICES) if ((record[voice] as { receipt?: unknown } | undefined)?.receipt === 'attested') attested++;
  }
  return attested;
}

interface TaskRefs {
  readonly nodes: TaskNode[];
  /** Finding and decision ids tasks name, with where; set to true once the row is seen. */
  readonly findings: Map<string, boolean>;
  readonly decisions: Map<string, boolean>;
  readonly uses: { readonly kind: 'findings' | 'blocked_by'; readonly ref: string; readonly at: string }[];
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
  const refs: TaskRefs = { nodes: [], findings: new Map(), decisions: new Map(), uses: [] };
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

/**
 * What each JSONL file contributes to the later checks. Rows that failed their schema
 * still count: a finding with a bad severity exists, so a task naming it does not dangle.
 */
function rowHook(key: string, display: string, refs: TaskRefs, countPending: () => void) {
  if (key === 'tasks.jsonl') {
    return (row: Record<string, unknown>, line: number) => {
      const id = row['id'];
      if (typeof id !== 'string') return;
      const pr = row['pr'];
      refs.nodes.push({ id, line, pr: typeof pr === 'string' ? pr : undefined, dependsOn: strings(row['depends_on']) });
      strings(row['findings']).forEach((ref, k) => {
        refs.findings.set(ref, false);
        refs.uses.push({ kind: 'findings', ref, at: `${display}:${line}.findings[${k}]` });
      });
      strings(row['blocked_by']).forEach((ref, k) => {
        refs.decisions.set(ref, false);
        refs.uses.push({ kind: 'blocked_by', ref, at: `${display}:${line}.blocked_by[${k}]` });
      });
    };
  }
  const wanted = key === 'findings.jsonl' ? refs.findings : refs.decisions;
  const decisions = key === 'decisions.jsonl';
  return (row: Record<string, unknown>) => {
    const id = row['id'];
    if (typeof id === 'string' && wanted.has(id)) wanted.set(id, true);
    if (decisions && row['status'] === 'pending') countPending();
  };
}

/** rowHook's findings branch for a row accepted on its bytes: only its id is known. */
function idHook(wanted: Map<string, boolean>) {
  return (id: string) => {
    if (wanted.has(id)) wanted.set(id, true);
  };
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

function checkTiming(bytes: Buffer, size: number, display: string, runId: string): Issue[] {
  if (size > MAX_LINE_BYTES) return [issue('ARTIFACT_INVALID_JSON', display, 'file over 16 MiB')];
  const parsed = parseJsonDocument(bytes, display);
  if ('issue' in parsed) return [parsed.issue];
  const value = parsed.value;
  const found = checkSchema(timingSchema, value, display) ?? [];
  const manifest = (value as { run?: unknown } | null)?.run;
  if (found.length === 0 && manifest !== runId) {
    found.push(issue('ARTIFACT_UNBOUND_ID', `${display}.run`, `run ${typeof manifest === 'string' ? JSON.stringify(manifest) : String(manifest)} is not ${runId}`));
  }
  return found;
}

/** Step 4: counts that are numbers must equal the rows of files that could be read. */
function checkCounts(manifest: RunManifest, name: string, jsonl: Map<string, JsonlResult>, pending: number, errors: IssueList): void {
  const counts = manifest.counts;
  if (counts === undefined) return;
  const expect = (field: 'decisions' | 'decisions_pending' | 'findings' | 'tasks', key: string, rows: (r: JsonlResult) => number) => {
    const claimed = counts[field];
    if (typeof claimed !== 'number') return;
    const listed = Object.hasOwn(manifest.artifacts, key);
    const result = jsonl.get(key);
    // A listed file that could not be read is reported once, where it is listed.
    if (listed && result === undefined) return;
    const actual = result === undefined ? 0 : rows(result);
    if (actual !== claimed) {
      errors.push(issue('ARTIFACT_COUNT_MISMATCH', `${name}.counts.${field}`, `counts.${field} is ${claimed}, ${key} has ${actual}`));
    }
  };
  expect('decisions', 'decisions.jsonl', (r) => r.lines);
  expect('decisions_pending', 'decisions.jsonl', () => pending);
  expect('findings', 'findings.jsonl', (r) => r.lines);
  expect('tasks', 'tasks.jsonl', (r) => r.lines);
}

/** Step 5: task references resolve and dependencies do not cycle. */
function checkReferences(manifest: RunManifest, refs: TaskRefs, jsonl: Map<string, JsonlResult>, errors: IssueList): void {
  const tasks = jsonl.get('tasks.jsonl');
  if (tasks === undefined) return;
  const readable = (key: string) => jsonl.has(key) || !Object.hasOwn(manifest.artifacts, key);
  for (const use of refs.uses) {
    const [map, key, what] =
      use.kind === 'findings' ? [refs.findings, 'findings.jsonl', 'finding'] : [refs.decisions, 'decisions.jsonl', 'decision'];
    if (!readable(key) || map.get(use.ref) === true) continue;
    errors.push(issue('ARTIFACT_DANGLING_REF', use.at, `no ${what} ${use.ref} in ${key}`));
  }
  checkTaskGraph(refs.nodes, manifest.artifacts['tasks.jsonl']!.path, errors);
}

/** Hashes a file while looking for `token`, which may straddle two chunks. */
function scanFor(file: string, token: Buffer): { sha256: string; seen: boolean } {
  let seen = false;
  let tail = Buffer.alloc(0);
  const { sha256 } = streamFile(file, (chunk) => {
    if (seen) return;
    const window = tail.length === 0 ? chunk : Buffer.concat([tail, chunk]);
    if (window.indexOf(token) !== -1) seen = true;
    else tail = Buffer.from(window.subarray(Math.max(0, window.length - token.length + 1)));
  });
  return { sha256, seen };
}
