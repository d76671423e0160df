import { closeSync, constants, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { errnoCode, LanewardError } from '../../formats/codes/error.ts';
import { isBoundedReadError, readBounded } from '../fs/read-bounded.ts';

/** One line of the receipt log: a launch, a refusal or a finish, with its wall-clock time. */
export interface ProbeRecord {
  readonly event: 'launch' | 'refused' | 'finish';
  readonly probe: string;
  readonly at: string;
  readonly [extra: string]: unknown;
}

/**
 * A log this large holds some 200,000 probes; anything larger is not one the guard
 * wrote, and reading it would spend the budget it is meant to protect.
 */
const MAX_PROBE_LOG_BYTES = 64 * 1024 * 1024;

/** The receipt log sits beside the receipt: `<FILE>.log`, one JSON line per record. */
export function probeLogPath(receiptFile: string): string {
  return `${receiptFile}.log`;
}

const invalid = (message: string, log: string) => new LanewardError('PROBE_LOG_INVALID', message, { path: log });

/**
 * Appends one record with a single O_APPEND write, so concurrent guards never interleave
 * inside a line. Never follows a symlink, never blocks on a FIFO (opened non-blocking and
 * refused unless it is a regular file). A torn last line (a guard killed mid-write) is
 * ended first, so it cannot swallow this record. A short write is an error: the caller
 * must not act on a record that is not whole in the log.
 */
export function appendProbeRecord(log: string, record: ProbeRecord): void {
  let fd: number;
  try {
    fd = openSync(log, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK, 0o600);
  } catch (error) {
    throw invalid(`${log} cannot be opened for appending (${errnoCode(error) ?? 'error'})`, log);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw invalid(`${log} is not a regular file`, log);
    const torn = stat.size > 0 && !endsWithNewline(log);
    const line = Buffer.from(`${torn ? '\n' : ''}${JSON.stringify(record)}\n`);
    const written = writeSync(fd, line);
    if (written !== line.length) throw invalid(`${log}: only ${written} of ${line.length} bytes were written`, log);
  } catch (error) {
    if (error instanceof LanewardError) throw error;
    throw invalid(`${log} cannot be written (${errnoCode(error) ?? 'error'})`, log);
  } finally {
    closeSync(fd);
  }
}

/** Whether the log's last byte is a newline (read through a descriptor of its own). */
function endsWithNewline(log: string): boolean {
  const fd = openSync(log, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const size = fstatSync(fd).size;
    const last = Buffer.alloc(1);
    return readSync(fd, last, 0, 1, size - 1) === 1 && last[0] === 0x0a;
  } finally {
    closeSync(fd);
  }
}

/**
 * Every whole record of the log (none when it does not exist yet). Lines that do not
 * parse (a torn line) are skipped: they carry no launch anyone acted on, since a launch
 * is acted on only once its own record is read back whole. A log that is not a regular
 * file, or too large, is PROBE_LOG_INVALID: the probe count cannot be proven from it.
 */
export function readProbeRecords(log: string): ProbeRecord[] {
  let text: string;
  try {
    text = readBounded(log, MAX_PROBE_LOG_BYTES, { noFollow: true }).bytes.toString('utf8');
  } catch (error) {
    if (isBoundedReadError(error) && error.problem === 'absent') return [];
    throw invalid(`${log} ${(error as Error).message}`, log);
  }
  const records: ProbeRecord[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    try {
      const value = JSON.parse(line) as unknown;
      if (isRecord(value)) records.push(value);
    } catch {
      // A torn line: see above.
    }
  }
  return records;
}

function isRecord(value: unknown): value is ProbeRecord {
  const record = value as ProbeRecord | null;
  return typeof record === 'object' && record !== null && typeof record.event === 'string' && typeof record.probe === 'string' && typeof record.at === 'string';
}
