import { fillPlaceholders } from '../../formats/providers/runner.ts';
import { LanewardError } from '../../formats/codes/error.ts';

/**
 * Splits a command template into argv words the way a user writes them, with no shell:
 * whitespace separates words; '...' keeps everything literally; "..." keeps everything
 * but \" and \\; a backslash outside quotes takes the next character literally. Nothing
 * is expanded ($, `, *, ~ and ; are plain characters). An unterminated quote, a trailing
 * backslash or an empty template is a usage error naming the option.
 */
export function splitTemplate(option: string, text: string): string[] {
  const words: string[] = [];
  let word = '';
  let inWord = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "'") {
      const end = text.indexOf("'", i + 1);
      if (end < 0) throw bad(option, `an unterminated ' quote at character ${i + 1}`);
      word += text.slice(i + 1, end);
      inWord = true;
      i = end;
    } else if (c === '"') {
      let j = i + 1;
      for (; j < text.length && text[j] !== '"'; j++) {
        if (text[j] === '\\' && (text[j + 1] === '"' || text[j + 1] === '\\')) j++;
        word += text[j];
      }
      if (j >= text.length) throw bad(option, `an unterminated " quote at character ${i + 1}`);
      inWord = true;
      i = j;
    } else if (c === '\\') {
      if (i + 1 >= text.length) throw bad(option, 'a trailing backslash');
      word += text[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(word);
      word = '';
      inWord = false;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) words.push(word);
  if (words.length === 0) throw bad(option, 'an empty command');
  return words;
}

/** Replaces every {prompt} and {result} inside each word; the words stay words. */
export function fillTemplate(argv: readonly string[], values: { readonly prompt: string; readonly result: string }): string[] {
  return fillPlaceholders(argv, { prompt: values.prompt, result: values.result });
}

function bad(option: string, detail: string): LanewardError {
  return new LanewardError('USAGE', `--${option} holds ${detail}; quote with '...' or "...", no shell is involved`);
}
