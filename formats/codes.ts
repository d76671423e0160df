/** One row of the result-code table: what went wrong and what to do about it. */
export interface CodeInfo {
  readonly summary: string;
  readonly fix: string;
}

/**
 * Every result code laneward prints. The codes are wire format (parents grep them);
 * summaries and fixes are ours. A line is rendered from this table only, so each code
 * has exactly one summary and one fix.
 */
export const RESULT_CODES = {
  ARTIFACT_INVALID_JSON: {
    summary: 'the file is not one JSON document',
    fix: 'rewrite the file from the run state (export again); never hand-edit it',
  },
  ARTIFACT_SCHEMA: {
    summary: 'a field does not match its schema',
    fix: 'write the field with the type and value the schema names (laneward artifact schema <name>)',
  },
  ARTIFACT_UNSUPPORTED_VERSION: {
    summary: 'the schema_version is not one this validator reads',
    fix: 'write the artifact at the version its schema names, or validate with a matching laneward',
  },
  ARTIFACT_RUN_INTERRUPTED: {
    summary: 'the run or one of its voices did not reach a terminal outcome',
    fix: 'resume the run to a terminal status; an interrupted run is never a partial success',
  },
  ARTIFACT_REVIEWER_MISSING: {
    summary: 'a required phase or voice has no recorded outcome or output',
    fix: 'record the voice outcome (completed with its output artifact, or unavailable/failed/skipped)',
  },
  ARTIFACT_PATH_ESCAPE: {
    summary: 'an artifact path leaves the run directory',
    fix: 'list artifacts by a relative path inside the run directory, without .. or symlinks out',
  },
  ARTIFACT_MISSING: {
    summary: 'a file the run lists is absent or cannot be read as a file',
    fix: 'restore the file, or export the run again so run.json lists what exists',
  },
  ARTIFACT_STALE: {
    summary: 'a file no longer matches the sha256 recorded in run.json',
    fix: 'export the run again so run.json records the current bytes; never edit an exported artifact',
  },
  ARTIFACT_MALFORMED_JSONL: {
    summary: 'a JSONL line is not one JSON object',
    fix: 'write exactly one JSON object per line, no blank lines, each under 16 MiB',
  },
  ARTIFACT_DUPLICATE_ID: {
    summary: 'a row id appears more than once in its file',
    fix: 'give every row a unique id within its file',
  },
  ARTIFACT_UNBOUND_ID: {
    summary: 'a row is not bound to the run',
    fix: 'start every row id with "<run>-" and set its run field to the run id of run.json',
  },
  ARTIFACT_COUNT_MISMATCH: {
    summary: 'a count in run.json does not match the rows in the file',
    fix: 'export the run again so counts are computed from the files',
  },
  ARTIFACT_DANGLING_REF: {
    summary: 'a task refers to a finding, decision or task that does not exist',
    fix: 'refer only to ids present in findings.jsonl, decisions.jsonl or tasks.jsonl (or a pr label a task carries)',
  },
  ARTIFACT_DEPENDENCY_CYCLE: {
    summary: 'task dependencies form a cycle',
    fix: 'break the cycle so depends_on describes an order',
  },
  ARTIFACT_GUARD_LINE_MISSING: {
    summary: 'an unattended run has no GUARD_NOT_INSTALLED line in review-record.md',
    fix: 'record the guard line in review-record.md as the session printed it',
  },
  ACK_REFUSED: {
    summary: 'an invalid run cannot be acknowledged',
    fix: 'validate the run first (laneward artifact validate) and fix or re-export it',
  },
  GATE_REPLY_UNPARSED: {
    summary: 'the gate reply does not parse; nothing was applied',
    fix: 'reply with rec, rec except <tokens>, as-is, or <id><option> tokens such as d3b (bare yes/no is not a reply)',
  },
  GATE_REV_STALE: {
    summary: 'the reply names a gate revision that is not the current one',
    fix: 'render the gate again and answer with the gate_rev it shows',
  },
  GATE_PAGE_OUT_OF_RANGE: {
    summary: 'the gate has no such page',
    fix: 'ask for a page between 1 and the page count the render prints',
  },
  USAGE: {
    summary: 'the command line is not one laneward accepts',
    fix: 'see laneward <command> --help',
  },
  IO_ERROR: {
    summary: 'a file could not be read or written',
    fix: 'check the path, its permissions and the free space',
  },
  INTERNAL: {
    summary: 'laneward failed unexpectedly',
    fix: 'report the message with the command that produced it',
  },
} as const satisfies Record<string, CodeInfo>;

export type ResultCode = keyof typeof RESULT_CODES;

/** Exit statuses shared by every command. */
export const EXIT = { ok: 0, fail: 1, usage: 2, refused: 3 } as const;

export function isResultCode(value: unknown): value is ResultCode {
  return typeof value === 'string' && Object.hasOwn(RESULT_CODES, value);
}
