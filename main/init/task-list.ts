/** What one task may hold: a plan's words, never a file's worth. */
export const MAX_TASK_CHARS = 2_000;
/** A task file's size at most: a thousand tasks of a thousand characters, never a log or an image. */
export const MAX_TASK_FILE_BYTES = 1 << 20;

/** A task list read: the tasks in order, or the first line that cannot be one. */
export type TaskList = { readonly ok: true; readonly tasks: readonly string[] } | { readonly ok: false; readonly line: number; readonly problem: string };

const ITEM = /^\s{0,3}(?:[-*+]|\d{1,9}[.)])\s+(.*)$/;
const CONTINUED = /^\s{2,}\S/;

/**
 * The tasks of a task file. A file with a Markdown list item in it is a Markdown list:
 * each item (`- task`, `* task`, `+ task`, `1. task`, `1) task`) is one task, an
 * indented line under an item continues it, and every other line (headings, prose) is
 * not a task. Otherwise each non-empty line is one task, except lines starting with `#`
 * (headings or comments). Blank tasks are skipped; a task over MAX_TASK_CHARS is refused
 * with its line number.
 */
export function parseTaskList(text: string): TaskList {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  const markdown = lines.some((line) => ITEM.test(line));
  const tasks: { text: string; line: number }[] = [];
  let open = false;
  lines.forEach((raw, i) => {
    const item = ITEM.exec(raw);
    if (markdown) {
      if (item !== null) {
        tasks.push({ text: item[1]!.trim(), line: i + 1 });
        open = true;
      } else if (open && CONTINUED.test(raw)) tasks[tasks.length - 1]!.text += ` ${raw.trim()}`;
      else open = false;
      return;
    }
    const line = raw.trim();
    if (line !== '' && !line.startsWith('#')) tasks.push({ text: line, line: i + 1 });
  });
  const kept = tasks.map((t) => ({ ...t, text: t.text.replace(/\s+/g, ' ').trim() })).filter((t) => t.text !== '');
  const long = kept.find((t) => t.text.length > MAX_TASK_CHARS);
  if (long !== undefined) return { ok: false, line: long.line, problem: `the task is ${long.text.length} characters, over ${MAX_TASK_CHARS}` };
  return { ok: true, tasks: kept.map((t) => t.text) };
}
