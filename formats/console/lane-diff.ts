// A workspace lane's diff against its crew's base, as the lane page shows it: per file,
// bounded per file and in total, every cut said so. The text is git's output for a tree an
// agent wrote: shown as text (escaped where it is rendered), never interpreted.

/** One file of the diff. */
export interface DiffFile {
  /** The file as git's `diff --git a/<old> b/<new>` line names it (old and new differ for a rename). */
  readonly path: string;
  /** Its part of the diff, from its `diff --git` line; cut at the per-file bound. */
  readonly text: string;
  /** Its part's length in the diff as git wrote it, in UTF-16 code units. */
  readonly chars: number;
  readonly truncated: boolean;
}

/** The lane's diff, or why there is none. */
export type LaneDiff =
  | {
      readonly status: 'ok';
      readonly base: string;
      readonly head: string;
      /** Files the diff touches, all of them (also those past the total bound). */
      readonly fileCount: number;
      /** Files shown, in git's order; those past the total bound are counted in `fileCount` only. */
      readonly files: readonly DiffFile[];
      /** Whether git's output was cut before its end (the total bound): files past it are not counted. */
      readonly cut: boolean;
    }
  | { readonly status: 'unavailable'; readonly detail: string };

export interface DiffBounds {
  /** Characters shown per file at most. */
  readonly perFile: number;
  /** Characters shown across the files at most; the files after are counted, not shown. */
  readonly total: number;
}

export const DIFF_BOUNDS: DiffBounds = { perFile: 32 * 1024, total: 256 * 1024 };

const FILE_START = 'diff --git ';

/**
 * Splits `git diff` output into its files, each bounded; `cut` says the output itself was
 * cut short (by the reader's byte bound) so its last file may be partial and more may follow.
 */
export function splitDiff(text: string, bounds: DiffBounds, cut: boolean): { files: DiffFile[]; fileCount: number } {
  const starts: number[] = [];
  if (text.startsWith(FILE_START)) starts.push(0);
  for (let at = text.indexOf(`\n${FILE_START}`); at !== -1; at = text.indexOf(`\n${FILE_START}`, at + 1)) starts.push(at + 1);
  const files: DiffFile[] = [];
  let shown = 0;
  for (let i = 0; i < starts.length; i++) {
    const part = text.slice(starts[i], i + 1 < starts.length ? starts[i + 1] : text.length);
    const firstLine = part.slice(0, part.indexOf('\n') === -1 ? part.length : part.indexOf('\n'));
    const path = firstLine.slice(FILE_START.length);
    const room = Math.min(bounds.perFile, bounds.total - shown);
    if (room <= 0) continue;
    const keep = part.length <= room ? part : part.slice(0, room);
    shown += keep.length;
    files.push({ path, text: keep, chars: part.length, truncated: keep.length < part.length || (cut && i === starts.length - 1) });
  }
  return { files, fileCount: starts.length };
}
