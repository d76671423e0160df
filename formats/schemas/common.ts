import * as v from 'valibot';

/** A JSON integer: 1.5 is refused, 1.0 is 1. */
export const integer = v.pipe(v.number(), v.integer());
export const positiveInteger = v.pipe(v.number(), v.integer(), v.minValue(1));
export const nonNegativeInteger = v.pipe(v.number(), v.integer(), v.minValue(0));
export const stringArray = v.array(v.string());
export const sha256Hex = v.pipe(v.string(), v.regex(/^[0-9a-fA-F]{64}$/, 'Expected 64 hex digits'));

/** `schema_version` fixed at one value; a wrong value is reported as unsupported, not as a schema error. */
export const schemaVersion = <const N extends number>(n: N) => v.literal(n);

const RESERVED_KEYS = ['__proto__', 'prototype', 'constructor'];

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
 * A record keyed by names, refusing the keys valibot's record skips unchecked
 * (`__proto__`, `prototype`, `constructor`), so no entry escapes its schema.
 */
export const namedRecord = <S extends v.GenericSchema>(value: S, what: string) =>
  v.pipe(
    v.custom<Record<string, unknown>>(isObject, 'Expected an object, not an array'),
    v.check((input) => !RESERVED_KEYS.some((key) => Object.hasOwn(input, key)), `Expected no ${what} named ${RESERVED_KEYS.join(', ')}`),
    v.record(v.string(), value),
  );
