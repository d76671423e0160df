import { LanewardError } from '../../formats/codes/error.ts';

/** The QA knobs, read once at the boundary. */
export interface QaConfig {
  /** Turns (user and assistant) between cadence checks. */
  readonly cadence: number;
  /** Diff-bearing turns before a review request. */
  readonly reviewCooldown: number;
}

export const QA_DEFAULTS: QaConfig = { cadence: 3, reviewCooldown: 1 };

const KNOBS = { cadence: 'LANEWARD_QA_CADENCE', reviewCooldown: 'LANEWARD_QA_REVIEW_COOLDOWN_TURNS' } as const;

/**
 * LANEWARD_QA_CADENCE (default 3) and LANEWARD_QA_REVIEW_COOLDOWN_TURNS (default 1): whole
 * numbers from 1 to 10,000; an empty value is the default, anything else a usage error.
 */
export function qaConfigFromEnv(env: NodeJS.ProcessEnv): QaConfig {
  const read = (key: keyof QaConfig): number => {
    const name = KNOBS[key];
    const raw = env[name];
    if (raw === undefined || raw === '') return QA_DEFAULTS[key];
    const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
    if (!Number.isSafeInteger(value) || value < 1 || value > 10_000) {
      throw new LanewardError('USAGE', `expected ${name} to be a whole number from 1 to 10000, got ${JSON.stringify(raw)}`, { path: name });
    }
    return value;
  };
  return { cadence: read('cadence'), reviewCooldown: read('reviewCooldown') };
}
