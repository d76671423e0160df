import * as v from 'valibot';
import { pregateChecksSchema } from './pregate-checks.ts';
import { SANDBOX_MODES } from '../sandbox/bwrap-argv.ts';
import { fillPlaceholders, isPresetRunner, pricesSchema, runnerSchema, type RunnerConfig } from '../providers/runner.ts';

/** The crew file version this laneward reads. */
export const CREW_VERSION = 1;

// At most 63 each: a lane's QA id (formats/crew/qa-id.ts) stays within the QA store's limit.
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;
const name = (what: string) => v.pipe(v.string(), v.regex(NAME, `Expected a ${what} of letters, digits, '.', '_' or '-' (at most 63, not starting with '.', '_' or '-')`));
const text = v.pipe(v.string(), v.minLength(1, 'Expected a non-empty string'));
const count = (min: number, max: number) => v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(max));

/**
 * Each an argv template (`{prompt}`, `{result}` and `{lane}` replaced inside each element,
 * never by a shell) or a provider preset (formats/providers/runner.ts).
 */
const runnersShape = { native: runnerSchema, outside: runnerSchema, observer: runnerSchema, agent: runnerSchema };
const runners = v.strictObject(runnersShape);
const runnerOverrides = v.strictObject(Object.fromEntries(Object.entries(runnersShape).map(([k, s]) => [k, v.optional(s)])) as {
  [K in keyof typeof runnersShape]: v.OptionalSchema<(typeof runnersShape)[K], undefined>;
});


const lane = v.strictObject({
  id: name('lane id'),
  plan: text,
  runners: v.optional(runnerOverrides),
});

const template = v.strictObject({
  /** `{n}` is the lane's number from 1, zero-padded to the count's width. */
  id: v.pipe(text, v.includes('{n}', 'Expected the id template to contain {n}')),
  plan: text,
  runners: v.optional(runnerOverrides),
});

/**
 * How each lane answers its gate: `as-is` keeps the plan's direction, `rec` takes every
 * recommendation; any other string is a reply in the gate grammar. A reply that accepts
 * a plan change ends the lane PLAN_AMEND_PENDING: the change needs a plan revision.
 * `owner`: the crew answers nothing; each lane waits at its gate for the owner's answer
 * (`laneward crew answer`), its agent not started.
 */
export const OWNER_ANSWERS = 'owner';
const answer = v.pipe(v.string(), v.minLength(1));

/** What an agent turn may add to its lane's branch, unless the crew file says otherwise: one file, and the whole turn. */
export const DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024;
export const DEFAULT_MAX_TURN_BYTES = 100 * 1024 * 1024;

/** What a call holds under a crew's spend cap while it runs, unless the crew file says otherwise. */
export const DEFAULT_RESERVE_USD = 0.5;

export const crewFileSchema = v.pipe(
  v.strictObject({
    schema_version: v.literal(CREW_VERSION),
    crew: name('crew name'),
    /** Lane run directories live at `<out>/<lane id>`; relative to the crew file. */
    out: v.optional(text, 'runs'),
    actions: v.strictObject({
      file: text,
      trust: text,
      reviewer: text,
      observer: text,
      agent: text,
    }),
    models: v.strictObject({ native: text, outside: text }),
    runners,
    answer: v.optional(answer, 'as-is'),
    limits: v.optional(
      v.strictObject({
        /** Children (reviewers, observers, agents) running at once, across every lane. */
        concurrency: v.optional(count(1, 1024), 8),
        /** Lanes in flight at once; the rest wait their turn (default: the concurrency). */
        lanes: v.optional(count(1, 100_000)),
        /**
         * The crew's spend cap in USD, over every call of every lane (reviewers, observers,
         * agents) and across the crew's runs; absent: no cap.
         */
        spend_cap_usd: v.optional(v.pipe(v.number(), v.minValue(0))),
        /**
         * What one call holds under the cap while it runs (its real cost replaces it once
         * known), and what a call whose cost stays unknown counts for good.
         */
        reserve_usd: v.optional(v.pipe(v.number(), v.minValue(0)), DEFAULT_RESERVE_USD),
        /** Agent turns a lane may take before it must report finish. */
        agent_turns: v.optional(count(1, 1000), 6),
        /** The largest file an agent turn may add to its lane's branch, in bytes (default 10 MiB). */
        max_file_bytes: v.optional(count(1, Number.MAX_SAFE_INTEGER), DEFAULT_MAX_FILE_BYTES),
        /** What one agent turn may add in all, in bytes (default 100 MiB): many files each under the file limit count too. */
        max_turn_bytes: v.optional(count(1, Number.MAX_SAFE_INTEGER), DEFAULT_MAX_TURN_BYTES),
        /** Per-call budget in ms for every child (the action decides the timeout mode). */
        timeout_ms: v.optional(count(1, 2 ** 31 - 1), 120_000),
      }),
      {},
    ),
    /**
     * USD per million tokens by model, for presets whose stream reports tokens but no cost
     * (codex, gemini-cli): a call of a model not listed has unknown spend.
     */
    prices: v.optional(pricesSchema),
    /**
     * The git repository the lanes' agents work in: each lane gets its own worktree and
     * branch `laneward/<crew>/<run id>/<lane>` made at `base` (a commit-ish, default HEAD). `repo`
     * is relative to the crew file.
     */
    workspace: v.optional(v.strictObject({ repo: text, base: v.optional(text) })),
    /**
     * Whether lanes' preset agents in worktrees run under laneward's sandbox (bubblewrap):
     * `auto` where it works, saying so when it does not; `required` refuses the crew without
     * it (SANDBOX_UNAVAILABLE); `off` never (formats/sandbox/bwrap-argv.ts).
     */
    sandbox: v.optional(v.picklist(SANDBOX_MODES), 'auto'),
    /** The repository's checks, run at each lane's head before it reports done (formats/crew/pregate-checks.ts); needs a workspace. */
    pregate: v.optional(pregateChecksSchema),
    /**
     * How `crew land` brings each lane onto the base: `rebase` (the default) replays the
     * lane's commits onto the base tip, `merge` makes a merge commit of the base tip and the
     * lane; `base` names the branch the train moves (default: the workspace's base when it
     * names a branch, else the branch the repository's HEAD is on).
     */
    land: v.optional(v.strictObject({ mode: v.optional(v.picklist(['rebase', 'merge']), 'rebase'), base: v.optional(text) })),
    /**
     * Lanes whose plans name one file (`Files:` lines, formats/review/plan-files.ts):
     * `parallel` (default) runs them side by side, as every lane; `order` runs each after
     * the earlier ones it overlaps (formats/crew/lane-order.ts). Needs a workspace.
     */
    overlap: v.optional(v.picklist(['parallel', 'order']), 'parallel'),
    lanes: v.optional(v.pipe(v.array(lane), v.minLength(1, 'Expected at least one lane'))),
    count: v.optional(count(1, 100_000)),
    template: v.optional(template),
  }),
  v.check((crew) => (crew.lanes === undefined) !== (crew.count === undefined), 'Expected either "lanes" or "count" with "template", not both and not neither'),
  v.check((crew) => (crew.count === undefined) === (crew.template === undefined), 'Expected "count" and "template" together'),
);

export type CrewFile = v.InferOutput<typeof crewFileSchema>;
export type Runners = Readonly<Record<keyof typeof runnersShape, RunnerConfig>>;
export type RunnerOverrides = v.InferOutput<typeof runnerOverrides>;

/** One lane, expanded from the file: its own runners, every path still as written. */
export interface LaneSpec {
  readonly id: string;
  readonly plan: string;
  readonly runners: Runners;
}

/** The lanes a crew file names, templates expanded and runner overrides applied. */
export function expandLanes(crew: CrewFile): LaneSpec[] {
  const merge = (over: RunnerOverrides | undefined): Runners => ({
    native: over?.native ?? crew.runners.native,
    outside: over?.outside ?? crew.runners.outside,
    observer: over?.observer ?? crew.runners.observer,
    agent: over?.agent ?? crew.runners.agent,
  });
  if (crew.lanes !== undefined) return crew.lanes.map((l) => ({ id: l.id, plan: l.plan, runners: merge(l.runners) }));
  const total = crew.count!;
  const width = String(total).length;
  const t = crew.template!;
  return Array.from({ length: total }, (_, i) => {
    const n = String(i + 1).padStart(width, '0');
    const id = t.id.replaceAll('{n}', n);
    return { id, plan: t.plan.replaceAll('{n}', n).replaceAll('{lane}', id), runners: merge(t.runners) };
  });
}

/** The first duplicate lane id, or null: ids name directories and store keys. */
export function duplicateLane(lanes: readonly LaneSpec[]): string | null {
  const seen = new Set<string>();
  for (const l of lanes) {
    if (seen.has(l.id)) return l.id;
    seen.add(l.id);
  }
  return null;
}

/** Whether a template-made id is a valid lane id (a template can still make a bad one). */
export function isLaneId(id: string): boolean {
  return NAME.test(id);
}

/** Replaces `{lane}` in an argv runner (a preset has no placeholders); no shell ever sees the result. */
export function forLane(runner: RunnerConfig, lane: string): RunnerConfig {
  return isPresetRunner(runner) ? runner : fillPlaceholders(runner, { lane });
}
