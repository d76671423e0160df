import * as v from 'valibot';

/** A JSON integer: 1.5 is refused, 1.0 is 1. */
export const integer = v.pipe(v.number(), v.integer());
export const positiveInteger = v.pipe(v.number(), v.integer(), v.minValue(1));
export const nonNegativeInteger = v.pipe(v.number(), v.integer(), v.minValue(0));
export const stringArray = v.array(v.string());
export const sha256Hex = v.pipe(v.string(), v.regex(/^[0-9a-fA-F]{64}$/, 'Expected 64 hex digits'));

/** `schema_version` fixed at one value; a wrong value is reported as unsupported, not as a schema error. */
export const schemaVersion = <const N extends number>(n: N) => v.literal(n);
