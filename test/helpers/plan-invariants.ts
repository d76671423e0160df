import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderResultFormat } from '../../formats/review/result-format.ts';
import type { JournalEvent, RunRecord } from '../../formats/review/run-record.ts';
import { openStore, readJournal, type Store } from '../../main/store/store.ts';
import type { Ran } from './plan-driver.ts';

// Checks that a review run is consistent whatever happened to the commands that drove it:
// read straight from the state root (LMDB, many readers beside the CLI's writers) and
// from the run directory.

/** Opens the state root for reading in the test process. */
export function storeAt(root: string): Store {
  return openStore(root);
}

/** The run as the last committed transaction left it (a fresh read snapshot). */
export function committed(store: Store, runId: string): { record: RunRecord | undefined; journal: JournalEvent[]; keys: number[] } {
  store.runs.resetReadTxn();
  const record = store.runs.get(runId);
  const journal = readJournal(store, runId);
  const keys = [...store.journal.getKeys({ start: [runId, 0], end: [runId, Number.MAX_SAFE_INTEGER] })].map((k) => (k as [string, number])[1]);
  return { record, journal, keys };
}

/** A run command ended well: exit 0, or a typed refusal; never INTERNAL, never a stack trace. */
export function typedOutcome(ran: Ran): string | null {
  if (ran.signal !== null) return `killed by ${ran.signal}`;
  if (/^\s+at .+\(.*:\d+:\d+\)$/m.test(ran.stderr) || /^\s+at /m.test(ran.stderr)) return `stack trace on stderr: ${ran.stderr}`;
  if (ran.code === 0) return null;
  if (ran.code !== 3) return `exit ${ran.code}: ${ran.stderr.trim()}`;
  const codes = [...ran.stderr.matchAll(/\(([A-Z_]+)\)$/gm)].map((m) => m[1]!);
  if (codes.length === 0) return `exit 3 with no result code: ${ran.stderr.trim()}`;
  if (codes.includes('INTERNAL')) return `INTERNAL: ${ran.stderr.trim()}`;
  if (!/^GSTACK_RESULT: skill=autoplan status=refused /m.test(ran.stdout)) return `exit 3 without the refused terminal line: ${ran.stdout}`;
  return null;
}

export function refusalCode(ran: Ran): string | undefined {
  return /\(([A-Z_]+)\)$/m.exec(ran.stderr)?.[1];
}

export interface Expect {
  /** Every ATTEMPT line printed for the run: id -> phase/voice. */
  readonly printed: Map<string, string>;
  /** Every BOUND line printed: attempt -> the line. */
  readonly bound: Map<string, string>;
  /** The bytes submitted per attempt. */
  readonly submitted: Map<string, string>;
  /** The usage each attempt's submit reports; undefined when submits report none. */
  readonly usage: ((attempt: string) => number) | undefined;
  readonly estimate: number;
}

/** Records what a command printed into `expect`; returns a problem if a line contradicts an earlier one. */
export function notePrinted(expect: Expect, stdout: string): string | null {
  const whole = stdout.split('\n').slice(0, -1);
  for (const line of whole) {
    const a = /^ATTEMPT: (\S+) phase=(\S+) voice=(\S+) /.exec(line);
    if (a !== null) {
      const where = `${a[2]}/${a[3]}`;
      const known = expect.printed.get(a[1]!);
      if (known !== undefined && known !== where) return `attempt ${a[1]} printed as ${known} and as ${where}`;
      for (const [id, w] of expect.printed) if (w === where && id !== a[1]) return `two attempts printed for ${where}: ${id} and ${a[1]}`;
      expect.printed.set(a[1]!, where);
    }
    const b = /^BOUND: (\S+) /.exec(line);
    if (b !== null) {
      const known = expect.bound.get(b[1]!);
      if (known !== undefined && known !== line) return `attempt ${b[1]} bound twice differently: ${known} / ${line}`;
      expect.bound.set(b[1]!, line);
    }
  }
  return null;
}

/** Every problem with the committed run and its directory; empty when consistent. */
export function runProblems(store: Store, runId: string | undefined, runDir: string, expect: Expect): string[] {
  const problems: string[] = [];
  if (runId !== undefined) {
    const { record, journal, keys } = committed(store, runId);
    if (record === undefined) {
      if (journal.length > 0) problems.push(`journal without a run record (${journal.length} events)`);
      if (expect.printed.size > 0) problems.push(`attempts were printed but the run record is absent`);
    } else {
      if (keys.length !== record.seq || keys.some((k, i) => k !== i)) problems.push(`journal keys ${keys.join(',')} do not run 0..${record.seq - 1}`);
      const minted = journal.filter((e) => e.type === 'attempt_minted').map((e) => String((e as unknown as { attempt: string }).attempt));
      if (new Set(minted).size !== minted.length) problems.push(`the journal mints an id twice: ${minted.join(',')}`);
      const ids = Object.keys(record.attempts).sort();
      if (ids.join(',') !== [...minted].sort().join(',')) problems.push(`record attempts ${ids.join(',')} differ from the journal's mints ${minted.join(',')}`);
      const perVoice = new Map<string, string[]>();
      for (const a of Object.values(record.attempts)) perVoice.set(`${a.phase}/${a.voice}`, [...(perVoice.get(`${a.phase}/${a.voice}`) ?? []), a.id]);
      for (const [where, list] of perVoice) if (list.length !== 1) problems.push(`${where} has ${list.length} attempts: ${list.join(',')}`);
      for (const [id, where] of expect.printed) {
        const a = record.attempts[id];
        if (a === undefined) problems.push(`attempt ${id} was printed but never journaled`);
        else if (`${a.phase}/${a.voice}` !== where) problems.push(`attempt ${id} printed as ${where}, recorded as ${a.phase}/${a.voice}`);
      }
      const binds = journal.filter((e) => e.type === 'result_bound').map((e) => String((e as unknown as { attempt: string }).attempt));
      if (new Set(binds).size !== binds.length) problems.push(`an attempt is bound twice in the journal: ${binds.join(',')}`);
      for (const [id, line] of expect.bound) {
        const a = record.attempts[id];
        if (a?.state !== 'bound' || a.bound === undefined) problems.push(`BOUND was printed for ${id} but it is ${a?.state ?? 'absent'}`);
        else if (!line.endsWith(`sha256=${a.bound.sha256.slice(0, 12)}`)) problems.push(`BOUND line ${line} differs from the record's sha ${a.bound.sha256}`);
      }
      const bound = Object.values(record.attempts).filter((a) => a.state === 'bound');
      const usage = expect.usage;
      const spent = usage === undefined ? 0 : bound.reduce((sum, a) => sum + usage(a.id), 0);
      if (Math.abs(record.spend.spent - spent) > 1e-6) problems.push(`spent ${record.spend.spent} != ${spent}, the usages of ${bound.length} bound attempts`);
      const open = Object.values(record.attempts).filter((a) => a.state === 'open').length;
      if (Math.abs(record.spend.reserved - open * expect.estimate) > 1e-6) problems.push(`reserved ${record.spend.reserved} != ${open} open x ${expect.estimate}`);
      for (const a of Object.values(record.attempts)) {
        if (a.state !== 'open') continue;
        const snapshot = record.phases[a.phase]?.snapshot ?? record.snapshot;
        const section = `${renderResultFormat(a.phase, snapshot, join(runDir, a.result)).trimEnd()}\n`;
        let prompt: string | undefined;
        try {
          prompt = readFileSync(join(runDir, a.prompt), 'utf8');
        } catch {
          prompt = undefined; // not yet written: resume or next writes it
        }
        if (prompt !== undefined && !prompt.endsWith(section)) problems.push(`${a.prompt} does not end with the RESULT FORMAT of ${a.id}`);
      }
      // A bind without --usage-usd is unknown spend, counted once per bound attempt.
      const unknown = usage === undefined ? bound.length : 0;
      if (record.spend.unknown_n !== unknown) problems.push(`unknown spend for ${record.spend.unknown_n} attempts, not ${unknown}`);
    }
  }
  problems.push(...fileProblems(runDir, expect));
  return problems;
}

/** Each file in the run directory is whole: JSON parses, prompts end with the RESULT FORMAT, seals equal the bytes. */
export function fileProblems(runDir: string, expect: Expect): string[] {
  const problems: string[] = [];
  let names: string[];
  try {
    names = readdirSync(runDir);
  } catch {
    return problems;
  }
  for (const name of names) {
    const path = join(runDir, name);
    const text = readFileSync(path, 'utf8');
    const bad = (why: string) => problems.push(`${name}: ${why}`);
    if (name === '.laneward-run') {
      if (!/^[a-z0-9][a-z0-9-]* \/.+\n$/.test(text)) bad('not one binding line');
    } else if (name.endsWith('.tmp')) {
      continue; // a writer's temp file, never read by anything; counted by the caller
    } else if (name.endsWith('.json')) {
      try {
        JSON.parse(text);
      } catch {
        bad('does not parse');
      }
    } else if (name.endsWith('.jsonl')) {
      if (text !== '' && !text.endsWith('\n')) bad('last row torn');
      for (const row of text.split('\n').filter((l) => l !== '')) {
        try {
          JSON.parse(row);
        } catch {
          bad(`row does not parse: ${row.slice(0, 80)}`);
        }
      }
    } else if (name.endsWith('-prompt.md')) {
      const phase = name.split('-')[0];
      if (!/\n## RESULT FORMAT\n[\s\S]*\nINPUT: \S+ [0-9a-f]{64}\n[\s\S]*\n$/.test(text) || !text.includes(`INPUT: ${phase} `)) bad('does not end with the RESULT FORMAT section');
    } else if (name.endsWith('.bound.md')) {
      const id = /^[a-z]+-(?:native|outside)\.(.+)\.bound\.md$/.exec(name)?.[1];
      const sent = id === undefined ? undefined : expect.submitted.get(id);
      if (sent === undefined) bad('a seal of no submitted attempt');
      else if (sent !== text) bad('differs from the submitted bytes');
    } else if (name.endsWith('.md')) {
      if (text === '' || !text.endsWith('\n')) bad('empty or torn');
    }
  }
  return problems;
}

export function tempFiles(runDir: string): string[] {
  try {
    return readdirSync(runDir).filter((n) => n.endsWith('.tmp'));
  } catch {
    return [];
  }
}
