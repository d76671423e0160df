import { readFileSync } from 'node:fs';
import { decodeUtf8 } from '../../formats/text/utf8.ts';
import { toError } from '../../formats/codes/error.ts';
import { tryReadBounded } from '../fs/read-bounded.ts';
import { usage } from './args.ts';

/** An option and its --no- form: set, cleared, or left to the run's default. */
export function flag<K extends string>(key: K, on: boolean | undefined, off: boolean | undefined): Partial<Record<K, boolean>> {
  if (on === true && off === true) throw usage(`--${key === 'ui' ? 'ui' : 'developer-tool'} and its --no- form exclude each other`);
  if (on === true) return { [key]: true } as Record<K, boolean>;
  if (off === true) return { [key]: false } as Record<K, boolean>;
  return {};
}

/** A dollar amount such as 2.50 (at most 6 decimals), or a usage error naming what was received. */
export function money<K extends string>(key: K, name: string, raw: string | undefined): Partial<Record<K, number>> {
  if (raw === undefined) return {};
  const value = /^\d{1,9}(\.\d{1,6})?$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isFinite(value)) throw usage(`expected --${name} to be dollars such as 2.50, got ${JSON.stringify(raw)}`);
  return { [key]: value } as Record<K, number>;
}

/** The options that were given, so an absent one stays absent (exactOptionalPropertyTypes). */
export function defined<T extends Record<string, string | undefined>>(values: T): { [K in keyof T]?: string } {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)) as { [K in keyof T]?: string };
}

/** The owner's words from a file or stdin, verbatim but for one trailing newline. */
export function readWords(source: string | number): string {
  let text: string;
  if (typeof source === 'string') {
    const read = tryReadBounded(source, 1024 * 1024);
    if (!read.ok) throw usage(`cannot read the owner's words: ${read.detail}`);
    text = ownerText(read.bytes, source);
  } else {
    let bytes: Buffer;
    try {
      bytes = readFileSync(source);
    } catch (error) {
      throw usage(`cannot read the owner's words from stdin: ${toError(error).message}`);
    }
    text = ownerText(bytes, 'stdin');
  }
  if (text.length > 1024 * 1024) throw usage("the owner's words are over 1 MiB");
  return text.replace(/\r?\n$/, '');
}

/** The owner's words are recorded as given: bytes that are not UTF-8 are refused, never replaced with U+FFFD. */
function ownerText(bytes: Uint8Array, from: string): string {
  const { text, badLine } = decodeUtf8(bytes);
  if (badLine !== null) throw usage(`the owner's words in ${from} are not UTF-8 text (line ${badLine})`);
  return text;
}
