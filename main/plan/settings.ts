import { resolve } from 'node:path';
import { LanewardError } from '../../formats/codes/error.ts';
import { oneLine } from '../../formats/text/one-line.ts';
import { modelFamily, parseFamilyTable, type FamilyAnswer } from '../../formats/review/model-family.ts';
import type { SessionKind } from '../../formats/review/run-record.ts';
import { tryReadBounded } from '../fs/read-bounded.ts';

/**
 * Everything a plan command takes from its environment, read once at the boundary (the
 * CLI, a crew, a bench) and passed in. No engine module reads the environment.
 */
export interface PlanSettings {
  /** The state root named by --state or LANEWARD_STATE_ROOT (an empty value names none). */
  readonly stateRoot: { readonly path: string; readonly from: string } | undefined;
  /** LANEWARD_EPHEMERAL=1: the state root is not kept (no history, no estimates). */
  readonly durable: boolean;
  /** LANEWARD_SESSION_KIND, with the note printed when the value was not a kind. */
  readonly session: { readonly kind: SessionKind; readonly note: string | null };
  /** LANEWARD_CHECKPOINT_DIR, or undefined when checkpoints are off. */
  readonly checkpointDir: string | undefined;
  /** A model's family, with the table LANEWARD_MODEL_FAMILIES names merged in (read on first use). */
  readonly familyOf: (model: string) => FamilyAnswer;
}

/** Where a plan command runs and what it was configured with. */
export interface PlanEnv {
  readonly cwd: string;
  readonly settings: PlanSettings;
}

const KINDS: readonly SessionKind[] = ['interactive', 'headless', 'spawned', 'unattended'];

/** Reads the settings from `env`; a malformed value is refused (USAGE) before anything is written. */
export function readPlanSettings(env: NodeJS.ProcessEnv, cwd: string, stateFlag?: string): PlanSettings {
  const familiesFile = nonEmpty(env['LANEWARD_MODEL_FAMILIES']);
  let table: Readonly<Record<string, string>> | undefined;
  return {
    stateRoot: configuredStateRoot(stateFlag, env, cwd),
    durable: readDurable(env['LANEWARD_EPHEMERAL']),
    session: readSession(env['LANEWARD_SESSION_KIND']),
    checkpointDir: nonEmpty(env['LANEWARD_CHECKPOINT_DIR']),
    familyOf: (model) => {
      if (familiesFile === undefined) return modelFamily(model);
      table ??= readFamilyTable(familiesFile);
      return modelFamily(model, table);
    },
  };
}

/** `{cwd, settings}` from an environment, for callers that start from one. */
export function readPlanEnv(env: NodeJS.ProcessEnv, cwd: string, stateFlag?: string): PlanEnv {
  return { cwd, settings: readPlanSettings(env, cwd, stateFlag) };
}

/**
 * The state root the user named: --state, else LANEWARD_STATE_ROOT; an empty value names
 * none (the run's binding, else `.laneward/state` under the working directory, decides).
 * Every command that opens a state root resolves it here.
 */
export function configuredStateRoot(flag: string | undefined, env: NodeJS.ProcessEnv, cwd: string): { path: string; from: string } | undefined {
  if (flag !== undefined && flag !== '') return { path: resolve(cwd, flag), from: '--state' };
  const fromEnv = env['LANEWARD_STATE_ROOT'];
  if (fromEnv !== undefined && fromEnv !== '') return { path: resolve(cwd, fromEnv), from: 'LANEWARD_STATE_ROOT' };
  return undefined;
}

/** The state root when nothing names one. */
export function defaultStateRoot(cwd: string): string {
  return resolve(cwd, '.laneward/state');
}

/** `1` is ephemeral, `0` or unset durable; anything else (`yes`, `true`) is refused rather than taken as durable. */
function readDurable(raw: string | undefined): boolean {
  if (raw === undefined || raw === '' || raw === '0') return true;
  if (raw === '1') return false;
  throw new LanewardError('USAGE', `LANEWARD_EPHEMERAL must be 1 (ephemeral) or 0 (durable, the default), got ${JSON.stringify(raw)}`, { path: 'LANEWARD_EPHEMERAL' });
}

/** An unknown kind runs as interactive and says so. */
function readSession(raw: string | undefined): PlanSettings['session'] {
  if (raw === undefined || raw === '') return { kind: 'interactive', note: null };
  if ((KINDS as readonly string[]).includes(raw)) return { kind: raw as SessionKind, note: null };
  // Escaped where it is read: the value is printed, and a line break in it would forge a line.
  return { kind: 'interactive', note: `SESSION_KIND: interactive (unknown kind '${oneLine(raw)}')` };
}

function readFamilyTable(file: string): Readonly<Record<string, string>> {
  const read = tryReadBounded(file, 1024 * 1024);
  if (!read.ok) throw new LanewardError('USAGE', `LANEWARD_MODEL_FAMILIES: ${read.detail}`, { path: file });
  const table = parseFamilyTable(read.bytes.toString('utf8'));
  if (!table.ok) throw new LanewardError('USAGE', `LANEWARD_MODEL_FAMILIES: ${table.message}`, { path: file });
  return table.table;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
