import type { LaneDiff } from '../../formats/console/lane-diff.ts';
import type { ConsoleActsClient } from './acts-client.ts';

// The lane page's script: runs in the browser from this function's source text (see
// main/console/lane-page-csp.ts), so it names nothing from any module.

interface PageElement {
  innerHTML: string;
  textContent: string | null;
  hidden?: boolean;
  setAttribute(name: string, value: string): void;
  getAttribute(name: string): string | null;
  addEventListener(type: string, listener: (event: { target: unknown; preventDefault(): void }) => void): void;
  closest?(selector: string): PageElement | null;
}
/** The part of a browser window the lane page's script uses. */
export interface LanePageWindow {
  readonly document: { getElementById(id: string): PageElement | null };
  readonly location: { readonly pathname: string };
  fetch(url: string, init?: Record<string, unknown>): Promise<{ readonly status: number; json(): Promise<unknown> }>;
}

/**
 * The lane page acting and showing its diff. With the console's token, #lane-actions shows
 * its buttons (`data-action`: retry, cancel-call, cancel-lane) and #act-result what each
 * request came to. A workspace lane's #diff is read once the page is open, and again on
 * #diff-reload (`<page>/diff.json`: git runs on request, never per snapshot), one
 * collapsible block per file, escaped, each cut said so.
 */
export function lanePageClient(win: LanePageWindow, acts: ConsoleActsClient, esc: (value: unknown) => string): void {
  const doc = win.document;
  const actions = doc.getElementById('lane-actions');
  const result = doc.getElementById('act-result');
  const by = doc.getElementById('act-by') as (PageElement & { value?: string }) | null;
  if (actions !== null && acts.acting) {
    actions.hidden = false;
    if (by !== null) {
      by.value = acts.name();
      by.addEventListener('input', () => acts.setName(String(by.value ?? '').trim()));
    }
    actions.addEventListener('click', (event) => {
      const button = (event.target as PageElement | null)?.closest?.('[data-action]');
      if (button == null) return;
      event.preventDefault();
      const action = String(button.getAttribute('data-action'));
      const lane = String(button.getAttribute('data-lane'));
      const name = String(by?.value ?? '').trim();
      if (name === '') {
        if (result !== null) result.textContent = `${action} ${lane}: give your name first (the request is recorded as yours, human:<name>)`;
        return;
      }
      if (result !== null) result.textContent = `${action} ${lane}: sending`;
      void acts.post(`/actions/${action}`, { lane, by: name }).then((sent) => {
        if (result === null) return;
        result.textContent = acts.describe(`${action} ${lane}`, sent);
        result.setAttribute('data-status', String(sent.body.status ?? 'refused'));
      });
    });
  }

  const pane = doc.getElementById('diff');
  const status = doc.getElementById('diff-status');
  const files = doc.getElementById('diff-files');
  if (pane === null || status === null || files === null) return;
  const load = async () => {
    status.textContent = 'reading the diff';
    pane.setAttribute('data-state', 'loading');
    let diff: LaneDiff;
    try {
      const res = await win.fetch(`${win.location.pathname}/diff.json`, { cache: 'no-store' });
      if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
      diff = (await res.json()) as LaneDiff;
    } catch (error) {
      status.textContent = `the diff could not be read: ${String(error)}`;
      pane.setAttribute('data-state', 'failed');
      return;
    }
    if (diff.status !== 'ok') {
      status.textContent = `no diff: ${String(diff.detail)}`;
      files.innerHTML = '';
      pane.setAttribute('data-state', 'unavailable');
      return;
    }
    const shown = Array.isArray(diff.files) ? diff.files : [];
    const left = diff.fileCount - shown.length;
    status.innerHTML =
      `<span id="diff-count" data-files="${esc(diff.fileCount)}">${esc(diff.fileCount)} file${diff.fileCount === 1 ? '' : 's'} changed</span> against <code>${esc(diff.base.slice(0, 12))}</code> (to <code>${esc(diff.head.slice(0, 12))}</code>)` +
      (left > 0 || diff.cut ? ` <span id="diff-cut" class="note">truncated: ${esc(shown.length)} shown${left > 0 ? `, ${esc(left)} not shown` : ''} (the page's diff budget)</span>` : '');
    files.innerHTML = shown
      .map(
        (f) =>
          `<details class="diff-file" data-path="${esc(f.path)}"${f.truncated ? ' data-truncated="true"' : ''}${shown.length <= 10 ? ' open' : ''}><summary>${esc(f.path)}${f.truncated ? ` <span class="note">(cut: ${esc(f.text.length)} of ${esc(f.chars)} characters)</span>` : ''}</summary>` +
          `<pre>${esc(f.text)}</pre></details>`,
      )
      .join('');
    pane.setAttribute('data-state', 'ok');
  };
  doc.getElementById('diff-reload')?.addEventListener('click', () => void load());
  void load();
}
