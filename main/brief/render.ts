import { join, resolve } from 'node:path';
import { briefPageCount, renderBrief } from '../../formats/brief/brief.ts';
import { issue, type Issue } from '../../formats/codes/issue.ts';
import { writeFileAtomic } from '../fs/atomic-write.ts';
import { loadBriefInput } from './inputs.ts';

export interface RenderOptions {
  readonly out: string;
  readonly page: number;
  readonly captain: boolean;
  readonly write: boolean;
  readonly summary: string | undefined;
}

export type RenderOutcome =
  | { readonly ok: true; readonly run: string; readonly gateRev: number; readonly page: number; readonly pages: number; readonly lines: string[]; readonly written: string | null }
  | { readonly ok: false; readonly issues: readonly Issue[]; readonly usage: boolean };

/**
 * `brief render`: loads the run directory's artifacts and renders one page. With
 * `write`, the page is also saved as DIR/brief.md through temp file + rename, so a
 * reader never sees half a brief.
 */
export function briefRender(options: RenderOptions): RenderOutcome {
  const runDir = resolve(options.out);
  const loaded = loadBriefInput(runDir, options.summary);
  if (!loaded.ok) return { ok: false, issues: loaded.issues, usage: false };
  const input = loaded.value;
  const pages = briefPageCount(input.gate);
  if (options.page < 1 || options.page > pages) {
    return { ok: false, issues: [issue('GATE_PAGE_OUT_OF_RANGE', '--page', `page ${options.page} of ${pages}`)], usage: true };
  }
  const lines = renderBrief(input, { page: options.page, captain: options.captain });
  let written: string | null = null;
  if (options.write) {
    written = join(runDir, 'brief.md');
    writeFileAtomic(written, `${lines.join('\n')}\n`);
  }
  return { ok: true, run: input.gate.run, gateRev: input.gate.gate_rev, page: options.page, pages, lines, written };
}
