import { chmodSync, existsSync, mkdirSync, readdirSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { decode, encode } from 'cbor-x';
import { LanewardError, toError } from '../../formats/codes/error.ts';
import { sha256 } from '../../formats/text/sha256.ts';
import type { BoundBlob, JournalEvent, RunRecord } from '../../formats/review/run-record.ts';
import { syncDirectory, writeFileAtomic } from '../fs/atomic-write.ts';
import { readJournal, transact, type Store } from '../store/store.ts';
import { BINDING_FILE } from './run-binding.ts';
import { makeDirs } from '../fs/make-dirs.ts';
import { readRunFile, RUN_FILE_MAX } from '../fs/run-file.ts';
import type { ReportFact } from './core/report-facts.ts';

/** What a generation carries of the store: enough to restore the run on another root. */
interface StateDump {
  readonly record: RunRecord;
  readonly blobs: [string, BoundBlob][];
  readonly journal: JournalEvent[];
}

interface GenerationManifest {
  readonly run: string;
  readonly seq: number;
  readonly at: string;
  /** name -> sha256 of every file in the generation, state.cbor included. */
  readonly files: Record<string, string>;
}

const STATE = 'state.cbor';
/** A generation's state carries every bound result of the run: larger than any one file. */
const STATE_MAX = 1024 * 1024 * 1024;
const JSON_MAX = 4 * 1024 * 1024;
const MANIFEST = 'manifest.json';

/** The checkpoint directory (LANEWARD_CHECKPOINT_DIR), refused when it overlaps the run directory. */
export function checkpointRoot(dir: string | undefined, runDir: string): string | null {
  if (dir === undefined) return null;
  const a = real(resolve(dir));
  const b = real(resolve(runDir));
  if (inside(a, b) || inside(b, a)) {
    throw new LanewardError('CHECKPOINT_OVERLAP', `checkpoint directory ${a} overlaps run directory ${b}`, { path: a });
  }
  return a;
}

/**
 * Publishes an immutable generation of the run under `<root>/<run>/generations/<seq>`:
 * its files and its store state, each listed with its sha256 in manifest.json, built in
 * a temp directory and renamed into place, then points current.json at it. A generation
 * older than the one current.json names never replaces it, and restore picks the newest
 * generation that verifies, so a stale copy never wins either way.
 */
export function publishCheckpoint(store: Store, review: RunRecord, runDir: string, root: string): ReportFact {
  try {
    const base = join(root, review.run);
    const generations = join(base, 'generations');
    makeDirs(generations);
    const name = String(review.seq).padStart(12, '0');
    const target = join(generations, name);
    if (existsSync(target)) return { fact: 'checkpoint', generation: name, seq: review.seq, dir: null };
    const staging = join(generations, `.${name}.${process.pid}.tmp`);
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(staging);
    const files: Record<string, string> = {};
    for (const entry of readdirSync(runDir, { withFileTypes: true })) {
      if (!entry.isFile() || entry.name === BINDING_FILE || entry.name.startsWith('.')) continue;
      // Read bounded, regular files only: a name swapped for a FIFO since readdir is refused.
      const bytes = readRunFile(join(runDir, entry.name));
      if (bytes === undefined) continue;
      writeFileSync(join(staging, entry.name), bytes);
      files[entry.name] = sha256(bytes);
    }
    const dump: StateDump = {
      record: review,
      blobs: Object.keys(review.attempts).flatMap((id) => {
        const blob = store.blobs.get([review.run, id]);
        return blob === undefined ? [] : [[id, blob] as [string, BoundBlob]];
      }),
      journal: readJournal(store, review.run),
    };
    const state = encode(dump);
    writeFileSync(join(staging, STATE), state);
    files[STATE] = sha256(state);
    const manifest: GenerationManifest = { run: review.run, seq: review.seq, at: new Date().toISOString(), files };
    writeFileSync(join(staging, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
    for (const file of readdirSync(staging)) chmodSync(join(staging, file), 0o444);
    renameSync(staging, target);
    syncDirectory(generations);
    const current = join(base, 'current.json');
    const before = readCurrent(current);
    if (before === null || before.seq < review.seq) writeFileAtomic(current, `${JSON.stringify({ run: review.run, generation: name, seq: review.seq })}\n`);
    return { fact: 'checkpoint', generation: name, seq: review.seq, dir: target };
  } catch (error) {
    return { fact: 'checkpoint_failed', detail: toError(error).message };
  }
}

export interface GenerationStatus {
  readonly name: string;
  readonly seq: number;
  readonly files: number;
  readonly problem: string | null;
  readonly current: boolean;
}

/** Every generation under `<root>/<run>`, newest first, each verified against its manifest. */
export function listGenerations(from: string): GenerationStatus[] {
  const current = readCurrent(join(from, 'current.json'));
  return generationNames(from).map((name) => {
    const loaded = loadGeneration(join(from, 'generations', name));
    const files = 'problem' in loaded ? 0 : Object.keys(loaded.manifest.files).length;
    return { name, seq: Number(name), files, problem: 'problem' in loaded ? loaded.problem : null, current: current?.generation === name };
  });
}

function generationNames(from: string): string[] {
  const generations = join(from, 'generations');
  if (!existsSync(generations)) throw new LanewardError('CHECKPOINT_INVALID', `${from} holds no generations/`, { path: from });
  return readdirSync(generations).filter((name) => /^\d{12}$/.test(name)).sort().reverse();
}

/**
 * Restores the newest generation that verifies into `out` and the store: the files are
 * staged beside `out` and renamed into place, then the record, blobs and journal are
 * written in one transaction (a store that already holds a newer state keeps it). Each
 * file is read once, and what is restored is those very bytes, checked against the
 * manifest; older generations are read only when a newer one fails.
 */
export async function restoreCheckpoint(from: string, out: string, store: Store): Promise<{ run: string; generation: string }> {
  let chosen: { name: string; loaded: Loaded; dump: StateDump } | undefined;
  for (const name of generationNames(from)) {
    const loaded = loadGeneration(join(from, 'generations', name));
    if ('problem' in loaded) continue;
    const dump = decodeState(loaded);
    if (dump !== null) {
      chosen = { name, loaded, dump };
      break;
    }
  }
  if (chosen === undefined) throw new LanewardError('CHECKPOINT_INVALID', `no generation under ${from} verifies`, { path: from });
  const { name: generation, loaded, dump } = chosen;
  if (existsSync(out) && readdirSync(out).length > 0) throw new LanewardError('CHECKPOINT_INVALID', `${out} is not empty; restore into a new directory`, { path: out });
  const staging = `${out}.${process.pid}.restore`;
  rmSync(staging, { recursive: true, force: true });
  makeDirs(staging);
  for (const [name, bytes] of loaded.files) {
    if (name === STATE) continue;
    writeFileSync(join(staging, name), bytes);
    chmodSync(join(staging, name), name.endsWith('.bound.md') ? 0o444 : 0o644);
  }
  writeFileSync(join(staging, BINDING_FILE), `${dump.record.run} ${store.root}\n`);
  rmSync(out, { recursive: true, force: true });
  renameSync(staging, out);
  await transact(store, 'runs', dump.record.run, (current) => {
    if (current !== undefined && current.seq >= dump.record.seq) return { change: null, result: null };
    for (const [id, blob] of dump.blobs) void store.blobs.put([dump.record.run, id], blob);
    dump.journal.forEach((event, i) => void store.journal.put([dump.record.run, i], event));
    const record = { ...dump.record, seq: dump.journal.length };
    return { change: { record, events: [{ type: 'restored', at: new Date().toISOString(), generation }] }, result: null };
  });
  return { run: dump.record.run, generation };
}

interface Loaded {
  readonly manifest: GenerationManifest;
  /** Every file the manifest lists, as read and hashed. */
  readonly files: ReadonlyMap<string, Buffer>;
}

/** Reads a generation once: every file its manifest lists, each checked against its sha256. */
function loadGeneration(dir: string): Loaded | { problem: string } {
  const manifest = readManifest(dir);
  if (manifest === null) return { problem: 'no readable manifest.json' };
  const files = new Map<string, Buffer>();
  for (const [name, hash] of Object.entries(manifest.files)) {
    if (name.includes('/') || name.startsWith('.')) return { problem: `manifest lists ${name}` };
    let bytes: Buffer | undefined;
    try {
      bytes = readRunFile(join(dir, name), name === STATE ? STATE_MAX : RUN_FILE_MAX);
    } catch {
      return { problem: `${name} is not a regular file of ours` };
    }
    if (bytes === undefined) return { problem: `${name} is missing` };
    if (sha256(bytes) !== hash) return { problem: `${name} does not match its sha256` };
    files.set(name, bytes);
  }
  if (!files.has(STATE)) return { problem: `${STATE} is not listed` };
  return { manifest, files };
}

/** The generation's store state, when it is the run its manifest names; null when not. */
function decodeState(loaded: Loaded): StateDump | null {
  try {
    const dump = decode(loaded.files.get(STATE)!) as StateDump;
    return dump?.record?.run === loaded.manifest.run && Array.isArray(dump.journal) && Array.isArray(dump.blobs) ? dump : null;
  } catch {
    return null;
  }
}

function readManifest(dir: string): GenerationManifest | null {
  try {
    const value = JSON.parse(readRunFile(join(dir, MANIFEST), JSON_MAX)?.toString('utf8') ?? '') as GenerationManifest;
    return typeof value.run === 'string' && typeof value.files === 'object' && value.files !== null ? value : null;
  } catch {
    return null;
  }
}

function readCurrent(file: string): { generation: string; seq: number } | null {
  try {
    const value = JSON.parse(readRunFile(file, JSON_MAX)?.toString('utf8') ?? '') as { generation?: unknown; seq?: unknown };
    return typeof value.generation === 'string' && typeof value.seq === 'number' ? { generation: value.generation, seq: value.seq } : null;
  } catch {
    return null;
  }
}

function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

function inside(child: string, parent: string): boolean {
  const rel = relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !rel.startsWith('/'));
}

/** Publishes a generation after a command changed the run, when checkpoints are on. */
export function checkpointAfter(store: Store, review: RunRecord, runDir: string, dir: string | undefined, lines: ReportFact[]): void {
  const root = checkpointRoot(dir, runDir);
  if (root !== null) lines.push(publishCheckpoint(store, review, runDir, root));
}
