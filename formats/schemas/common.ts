import * as v from 'valibot';

/**
 * A JSON integer: 1.5 is refused, 1.0 is 1. Only safe integers (|n| <= 2^53 - 1): a
 * larger one cannot be read back exactly, so every command uses this one bound.
 */
export const integer = v.pipe(v.number(), v.safeInteger());
export const positiveInteger = v.pipe(v.number(), v.safeInteger(), v.minValue(1));
export const nonNegativeInteger = v.pipe(v.number(), v.safeInteger(), v.minValue(0));
export const stringArray = v.array(v.string());
export const sha256Hex = v.pipe(v.string(), v.regex(/^[0-9a-fA-F]{64}$/, 'Expected 64 hex digits'));

/** `schema_version` fixed at one value; a wrong value is reported as unsupported, not as a schema error. */
export const schemaVersion = <const N extends number>(n: N) => v.literal(n);

const isObject = (input: unknown): input is Record<string, unknown> =>
  typeof input === 'object' && input !== null && !Array.isArray(input);

/**
 * A JSON object, never an array (valibot's object and record schemas take arrays too).
 * The check runs on the input, before the object schema builds its output; the compiled
 * fast path declines a custom check, so valibot decides these.
 */
export const plainObject = <S extends v.GenericSchema<Record<string, unknown>>>(schema: S) =>
  v.pipe(v.custom<Record<string, unknown>>(isObject, 'Expected an object, not an array'), schema);

/**
 * A record keyed by any name. valibot's record skips the keys `__proto__`, `prototype`
 * and `constructor` unchecked; this one checks every own key like any other, so a phase
 * named `constructor` is a phase, and builds its output with defined properties, so a
 * key named `__proto__` stays a key and never touches a prototype.
 */
export const namedRecord = <S extends v.GenericSchema>(value: S) => {
  const base = v.record(v.string(), value);
  type Dataset = { value: unknown; typed?: boolean; issues?: v.BaseIssue<unknown>[] };
  const schema = {
    ...base,
    '~run'(dataset: Dataset, config: v.Config<v.BaseIssue<unknown>>) {
      const input = dataset.value as Record<string, unknown>;
      const output: Record<string, unknown> = {};
      dataset.typed = true;
      for (const key of Object.keys(input)) {
        const entry = input[key];
        const result = value['~run']({ value: entry }, config) as Dataset;
        if (result.issues) {
          const pathItem = { type: 'object', origin: 'value', input, key, value: entry } as const;
          for (const found of result.issues) {
            (found as { path?: unknown[] }).path = [pathItem, ...((found.path as unknown[] | undefined) ?? [])];
            (dataset.issues ??= []).push(found);
          }
          if (config.abortEarly) {
            dataset.typed = false;
            break;
          }
        }
        if (!result.typed) dataset.typed = false;
        Object.defineProperty(output, key, { value: result.value, enumerable: true, writable: true, configurable: true });
      }
      dataset.value = output;
      return dataset;
    },
  } as unknown as typeof base;
  (schema as { '~standard': unknown })['~standard'] = {
    version: 1,
    vendor: 'valibot',
    validate: (input: unknown) => schema['~run']({ value: input }, v.getGlobalConfig()),
  };
  return v.pipe(v.custom<Record<string, unknown>>(isObject, 'Expected an object, not an array'), schema);
};
