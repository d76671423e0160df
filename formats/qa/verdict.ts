import * as v from 'valibot';

/** The longest note or guidance kept from a verdict file. */
export const VERDICT_TEXT_MAX = 4_000;
/** The largest verdict file read. */
export const VERDICT_FILE_MAX = 64 * 1024;

const text = v.pipe(v.string(), v.maxLength(VERDICT_TEXT_MAX, `Expected at most ${VERDICT_TEXT_MAX} characters`));

/**
 * The file an observer writes at `{result}`: its verdict, a note, and guidance, which a
 * failing verdict must carry (it is what the coordinator is told to act on).
 */
export const qaVerdictSchema = v.pipe(
  v.strictObject({
    verdict: v.picklist(['pass', 'fail'], 'Expected verdict "pass" or "fail"'),
    note: text,
    guidance: v.exactOptional(text),
  }),
  v.check((r) => r.verdict === 'pass' || (r.guidance ?? '').trim() !== '', 'Expected non-empty guidance with verdict "fail"'),
);

export type QaVerdict = v.InferOutput<typeof qaVerdictSchema>;
