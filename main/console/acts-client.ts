import type { CrewSnapshot, LaneView } from '../../formats/console/snapshot.ts';

// The console's acting, in the browser: run from these functions' own source text (see
// main/console/page.ts and lane-page-csp.ts), so each names nothing from any module; what
// it needs comes in as a parameter. Every text from the crew goes through `esc`.

/** A response from an action route, as the page reads it. */
export interface ActReply {
  readonly status: number;
  readonly body: { readonly status?: string; readonly code?: string | null; readonly detail?: string | null; readonly seq?: number | null; readonly answers?: readonly { lane: string; status: string; code: string | null; detail: string | null; state: string | null }[] };
}

/** What a page acts with: whether it holds a token, and a POST of a JSON body with it. */
export interface ConsoleActsClient {
  readonly acting: boolean;
  post(path: string, body: unknown): Promise<ActReply>;
  /** The name the operator gave (kept for the tab), '' before one. */
  name(): string;
  setName(name: string): void;
  /** One action's outcome as a line the page shows. */
  describe(what: string, reply: ActReply): string;
}

interface StorageLike {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}
/** The part of a browser window acting uses. */
export interface ActsWindow {
  readonly location: { readonly search: string; readonly pathname: string; readonly hash: string };
  readonly history: { replaceState(state: unknown, title: string, url: string): void };
  readonly sessionStorage: StorageLike;
  fetch(url: string, init: Record<string, unknown>): Promise<{ readonly status: number; json(): Promise<unknown> }>;
}

/**
 * The page's token: taken from the URL once (`?token=`, as the crew printed it), kept in
 * the tab's sessionStorage, and removed from the address bar at once, so it is not left in
 * history, a bookmark or a screen share; a page opened without it (a link within the tab)
 * finds it there. Each POST sends it in its X-Laneward-Token header.
 */
export function consoleActs(win: ActsWindow): ConsoleActsClient {
  const KEY = 'laneward-console-token';
  const NAME_KEY = 'laneward-console-name';
  let token: string | null = null;
  try {
    const params = new URLSearchParams(String(win.location.search));
    const given = params.get('token');
    if (given !== null && given !== '') {
      token = given;
      win.sessionStorage.setItem(KEY, given);
      params.delete('token');
      const rest = params.toString();
      win.history.replaceState(null, '', `${win.location.pathname}${rest === '' ? '' : `?${rest}`}${win.location.hash}`);
    } else token = win.sessionStorage.getItem(KEY);
  } catch {
    // No storage (a sandboxed frame): the page only shows.
  }
  const refused = (code: string, detail: string): ActReply => ({ status: 0, body: { status: 'refused', code, detail } });
  return {
    acting: token !== null,
    describe: (what, reply) => {
      const b = reply.body;
      if (b.status === 'requested') return `${what}: requested${typeof b.seq === 'number' ? ` (#${b.seq})` : ''}`;
      return `${what}: refused ${String(b.code ?? `HTTP ${reply.status}`)}${typeof b.detail === 'string' && b.detail !== '' ? ` (${b.detail})` : ''}`;
    },
    name: () => {
      try {
        return win.sessionStorage.getItem(NAME_KEY) ?? '';
      } catch {
        return '';
      }
    },
    setName: (name) => {
      try {
        win.sessionStorage.setItem(NAME_KEY, name);
      } catch {
        // kept for this page only
      }
    },
    post: async (path, body) => {
      if (token === null) return refused('CONSOLE_TOKEN_MISSING', 'this page holds no token: open the URL the crew printed');
      try {
        const res = await win.fetch(path, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'X-Laneward-Token': token },
          body: JSON.stringify(body),
          credentials: 'same-origin',
          cache: 'no-store',
        });
        let parsed: unknown;
        try {
          parsed = await res.json();
        } catch {
          parsed = { status: 'refused', code: null, detail: `HTTP ${res.status}` };
        }
        return { status: res.status, body: (typeof parsed === 'object' && parsed !== null ? parsed : {}) as ActReply['body'] };
      } catch (error) {
        return refused('CONSOLE_UNREACHABLE', String(error));
      }
    },
  };
}

interface InboxElement {
  innerHTML: string;
  textContent: string | null;
  value?: string;
  checked?: boolean;
  hidden?: boolean;
  disabled?: boolean;
  setAttribute(name: string, value: string): void;
  getAttribute(name: string): string | null;
  addEventListener(type: string, listener: (event: { target: unknown; preventDefault(): void }) => void): void;
  querySelector(selector: string): InboxElement | null;
  querySelectorAll(selector: string): ArrayLike<InboxElement>;
  closest?(selector: string): InboxElement | null;
  remove(): void;
  insertAdjacentHTML(where: string, html: string): void;
  appendChild(child: InboxElement): unknown;
}
/** The part of a browser window the inbox uses. */
export interface InboxWindow {
  readonly document: { getElementById(id: string): InboxElement | null };
  fetch(url: string, init?: Record<string, unknown>): Promise<{ readonly status: number; json(): Promise<unknown> }>;
}

/**
 * The gate inbox: every lane waiting for its owner (stopped at its gate, CREW_OWNER_PENDING),
 * kept in place as snapshots come (a row is added or removed, never redrawn, so a ticked
 * box, an open brief and the typed name and reply stay as they are). A row's brief, findings
 * and recommendation are read on request (`/lanes/<id>/gate.json`). The owner answers the
 * ticked lanes, or one lane, in the reply grammar, by the name typed; the answer is the
 * route's (`/actions/answer`), the same code `crew answer` runs. Returns the function the
 * crew page's script calls with each snapshot it applied.
 */
export function inboxClient(win: InboxWindow, acts: ConsoleActsClient, esc: (value: unknown) => string): (snapshot: CrewSnapshot) => void {
  const doc = win.document;
  const box = doc.getElementById('inbox');
  const body = doc.getElementById('inbox-lanes');
  const count = doc.getElementById('inbox-count');
  // The page's one name field: every action, an answer too, is recorded as that person's.
  const by = doc.getElementById('act-by');
  const reply = doc.getElementById('inbox-reply');
  const result = doc.getElementById('inbox-result');
  const form = doc.getElementById('inbox-form');
  const all = doc.getElementById('inbox-all');
  if (box === null || body === null || count === null || by === null || reply === null || result === null || form === null) return () => undefined;
  const laneHref = (id: string) => `/lanes/${encodeURIComponent(id).replace(/\.json$/, '%2Ejson')}`;
  const rowOf = (id: string): InboxElement | null => {
    for (const row of Array.from(body.querySelectorAll('tr.inbox-lane'))) if (row.getAttribute('data-lane') === id) return row;
    return null;
  };
  if (!acts.acting) {
    form.hidden = true;
    result.textContent = 'This page holds no token: it shows the waiting lanes; open the URL the crew printed to answer them here.';
  }
  all?.addEventListener('input', () => {
    for (const pick of Array.from(body.querySelectorAll('input.inbox-pick'))) pick.checked = all.checked === true;
  });

  const showGate = async (id: string, row: InboxElement) => {
    const detail = row.querySelector('td.inbox-gate');
    if (detail === null) return;
    if (detail.getAttribute('data-loaded') === 'true') {
      detail.hidden = !detail.hidden;
      return;
    }
    detail.hidden = false;
    detail.textContent = 'reading its gate';
    let gate: { gateRev: number | null; brief: string | null; briefTruncated: boolean; recommendation: string | null; items: { id: string; title: string; kind: string; recommended: string; recommendedText: string }[]; findings: { id: string; severity: string; title: string }[]; findingsCount: number };
    try {
      const res = await win.fetch(`${laneHref(id)}/gate.json`, { cache: 'no-store' });
      if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
      gate = (await res.json()) as typeof gate;
    } catch (error) {
      detail.textContent = `its gate could not be read: ${String(error)}`;
      return;
    }
    const items = (Array.isArray(gate.items) ? gate.items : [])
      .map((item) => `<tr><td><code>${esc(item.id)}</code></td><td>${esc(item.kind)}</td><td>${esc(item.title)}</td><td>recommends <code>${esc(item.recommended)}</code> ${esc(item.recommendedText)}</td></tr>`)
      .join('');
    const findings = (Array.isArray(gate.findings) ? gate.findings : []).map((f) => `<li data-finding="${esc(f.id)}"><b>${esc(f.severity)}</b> ${esc(f.title)}</li>`).join('');
    const more = gate.findingsCount > (Array.isArray(gate.findings) ? gate.findings.length : 0) ? `<p class="note">and ${gate.findingsCount - gate.findings.length} more findings</p>` : '';
    detail.innerHTML =
      `<p class="inbox-rec">recommendation (gate ${esc(gate.gateRev ?? '–')}): <code>${esc(gate.recommendation ?? 'none')}</code></p>` +
      (items === '' ? '' : `<table class="inbox-items"><tbody>${items}</tbody></table>`) +
      `<h4>Findings (${esc(gate.findingsCount)})</h4>${findings === '' ? '<p class="note">none</p>' : `<ul class="inbox-findings">${findings}</ul>`}${more}` +
      `<h4>Owner brief${gate.briefTruncated ? ' (its start: cut at the bound)' : ''}</h4>${gate.brief === null ? '<p class="note">no brief.md could be read</p>' : `<pre class="inbox-brief">${esc(gate.brief)}</pre>`}`;
    detail.setAttribute('data-loaded', 'true');
  };

  const answer = async (lanes: string[]) => {
    const name = String(by.value ?? '').trim();
    const text = String(reply.value ?? '').trim();
    if (lanes.length === 0) return void (result.textContent = 'tick the lanes to answer first');
    if (name === '') return void (result.textContent = 'give your name: the answer is recorded as yours (human:<name>)');
    result.textContent = `answering ${lanes.length} lane(s)`;
    const sent = await acts.post('/actions/answer', { lanes, reply: text, by: name });
    const answers = Array.isArray(sent.body.answers) ? sent.body.answers : null;
    if (answers === null) {
      result.textContent = `answer refused: ${String(sent.body.code ?? `HTTP ${sent.status}`)}${typeof sent.body.detail === 'string' ? ` (${sent.body.detail})` : ''}`;
      return;
    }
    result.setAttribute('data-answered', answers.filter((a) => a.status === 'answered').map((a) => a.lane).join(' '));
    result.innerHTML = answers.map((a) => `<span data-lane="${esc(a.lane)}" data-status="${esc(a.status)}">${esc(a.lane)}: ${esc(a.status)}${a.code === null ? '' : ` ${esc(a.code)}`}${a.detail === null ? '' : ` (${esc(a.detail)})`}</span>`).join('<br>');
  };

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const picked = Array.from(body.querySelectorAll('input.inbox-pick'))
      .filter((pick) => pick.checked === true)
      .map((pick) => String(pick.getAttribute('data-lane')));
    void answer(picked);
  });
  body.addEventListener('click', (event) => {
    const target = event.target as InboxElement | null;
    const brief = target?.closest?.('[data-inbox-brief]');
    if (brief != null) {
      const id = String(brief.getAttribute('data-inbox-brief'));
      const row = rowOf(id);
      if (row !== null) void showGate(id, row);
      return;
    }
    const one = target?.closest?.('[data-inbox-answer]');
    if (one != null) void answer([String(one.getAttribute('data-inbox-answer'))]);
  });

  return (snapshot) => {
    const lanes: readonly LaneView[] = Array.isArray(snapshot.lanes) ? snapshot.lanes : [];
    // Waiting for its owner: stopped at its gate (formats/crew/record.ts's OWNER_PENDING, restated).
    const waiting = lanes.filter((lane) => lane.state === 'interrupted' && lane.code === 'CREW_OWNER_PENDING');
    const ids = new Set(waiting.map((lane) => lane.id));
    for (const row of Array.from(body.querySelectorAll('tr.inbox-lane'))) if (!ids.has(String(row.getAttribute('data-lane')))) row.remove();
    for (const lane of waiting) {
      if (rowOf(lane.id) !== null) continue;
      const id = esc(lane.id);
      body.insertAdjacentHTML(
        'beforeend',
        `<tr class="inbox-lane" data-lane="${id}"><td><input type="checkbox" class="inbox-pick" data-lane="${id}" aria-label="answer ${id}"${acts.acting ? '' : ' disabled'}></td>` +
          `<td class="id"><a href="${esc(laneHref(lane.id))}">${id}</a>${typeof lane.title === 'string' ? ` <span class="title">${esc(lane.title)}</span>` : ''}</td>` +
          `<td><button type="button" data-inbox-brief="${id}">brief, findings, recommendation</button>${acts.acting ? ` <button type="button" data-inbox-answer="${id}">answer this one</button>` : ''}</td>` +
          `<td class="inbox-gate" hidden></td></tr>`,
      );
    }
    // In the crew file's order, whatever order they came to their gates in (a moved row keeps its state).
    for (const lane of waiting) {
      const row = rowOf(lane.id);
      if (row !== null) body.appendChild(row);
    }
    count.textContent = String(waiting.length);
    box.hidden = waiting.length === 0 && body.querySelectorAll('tr.inbox-lane').length === 0;
    box.setAttribute('data-count', String(waiting.length));
  };
}
