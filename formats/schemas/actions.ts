import * as v from 'valibot';
import { MAX_TIMER_MS } from '../supervision/limits.ts';
import { PROGRESS_SOURCES } from '../supervision/modes.ts';
import { schemaVersion } from './common.ts';

/** The descriptor version this laneward reads and signs; any other is refused. */
export const DESCRIPTOR_VERSION = 1;


// Budgets end up in setTimeout, which fires at once for anything above 2^31-1 ms: a
// larger value would silently become a 1 ms budget, so it is refused here instead.
const budget = (min: number) =>
  v.pipe(v.number(), v.integer(), v.minValue(min), v.maxValue(MAX_TIMER_MS, `Expected at most ${MAX_TIMER_MS} ms`));

const budgets = {
  cleanup_reserve_ms: budget(0),
  post_provider_ms: budget(1),
  /** No structured event (a JSON line on stdout, or a mark on fd 3) within this many ms of the spawn: PROVIDER_NO_START. */
  first_event_ms: v.optional(budget(1)),
  /** No exit within this many ms after the provider's terminal event (result, turn.completed): PROVIDER_NO_EXIT, result kept. */
  exit_after_terminal_ms: v.optional(budget(1)),
};

/**
 * One action. The timeout mode picks the variant, so `progress` is required exactly when
 * the mode is admitted-progress: a total-deadline action that names a progress source
 * would leave the reader to guess which of the two the signer meant.
 */
export const actionSpecSchema = v.variant('timeout_mode', [
  v.looseObject({
    timeout_mode: v.literal('total_deadline'),
    progress: v.exactOptional(v.never('Expected no progress source with timeout_mode "total_deadline"')),
    ...budgets,
  }),
  v.looseObject({
    timeout_mode: v.literal('admitted_progress_inactivity'),
    progress: v.picklist(PROGRESS_SOURCES),
    ...budgets,
  }),
]);

// valibot's record skips these keys without validating them (prototype safety), so an
// action under such a name would be accepted unchecked: refuse the name instead.
const RESERVED_NAMES = ['__proto__', 'prototype', 'constructor'];

const isObject = (input: unknown): input is Record<string, unknown> =>
  typeof input === 'object' && input !== null && !Array.isArray(input);

const actionsSchema = v.pipe(
  v.custom<Record<string, unknown>>(isObject, 'Expected an object of actions by name'),
  v.check(
    (input) => !RESERVED_NAMES.some((name) => Object.hasOwn(input, name)),
    `Expected no action named ${RESERVED_NAMES.join(', ')}`,
  ),
  v.record(v.pipe(v.string(), v.minLength(1, 'Expected a non-empty action name')), actionSpecSchema),
  v.check((actions) => Object.keys(actions).length > 0, 'Expected at least one action'),
);

/** The signed descriptor file: every logical action's timeout mode and budgets. */
export const actionDescriptorSchema = v.looseObject({
  schema_version: schemaVersion(DESCRIPTOR_VERSION),
  actions: actionsSchema,
});

export type ActionSpec = v.InferOutput<typeof actionSpecSchema>;
export type ActionDescriptor = v.InferOutput<typeof actionDescriptorSchema>;
