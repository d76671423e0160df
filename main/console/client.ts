import type { ConsoleEvent, CrewSnapshot, LaneView } from '../../formats/console/snapshot.ts';
import type { ViewUi } from '../../formats/console/view.ts';
import type { ConsoleActsClient } from './acts-client.ts';

// The crew page's script: runs in the browser, from this function's source text (see
// main/console/page.ts). Self-contained: it reaches the DOM only through `win` and renders
// only through `render`, so it names nothing from this module or any other.

interface ClientElement {
  innerHTML: string;
  textContent: string | null;
  value?: string;
  hidden?: boolean;
  disabled?: boolean;
  getAttribute?(name: string): string | null;
  setAttribute(name: string, value: string): void;
  addEventListener?(type: string, listener: (event: ClientEvent) => void): void;
}
interface ClientEvent {
  readonly target: { closest?(selector: string): { getAttribute(name: string): string | null } | null } | null;
  preventDefault(): void;
}
interface ClientEventSource {
  readonly readyState: number;
  onmessage: ((event: { readonly data: string }) => void) | null;
  onerror: (() => void) | null;
  close(): void;
}
/** The part of a browser window the script uses. */
export interface ClientWindow {
  readonly document: { title: string; getElementById(id: string): ClientElement | null };
  readonly EventSource: new (url: string) => ClientEventSource;
  readonly location: { hash: string };
  addEventListener(type: 'hashchange', listener: () => void): void;
  setTimeout(callback: () => void, ms: number): unknown;
}

/**
 * Follows /events: the first message is the whole crew, each later one the head and the
 * lanes that changed since the message before (applied in place; one that does not follow
 * the last applied reconnects, which starts again with a whole snapshot). The operator's
 * filter, order and page live in the URL's fragment (#state=failed&page=2), so a view can be
 * linked; the form #controls and the view's links and buttons set it. The view is redrawn at
 * most four times a second. `#conn` says whether the stream is live; `#view[data-seq]` is
 * the number of the last message applied. A done crew's stream is closed.
 *
 * With `acts` holding the console's token, the view's buttons act (`data-action` retry,
 * cancel-call or cancel-lane on `data-lane`; #crew-stop, pressed twice, stops the crew) and
 * #act-result says what each request came to; `onSnapshot` (the gate inbox) sees each
 * snapshot drawn.
 */
export function crewClient(win: ClientWindow, render: (snapshot: CrewSnapshot, ui: ViewUi) => string, acts?: ConsoleActsClient, onSnapshot?: (snapshot: CrewSnapshot) => void): void {
  const doc = win.document;
  const view = doc.getElementById('view');
  const conn = doc.getElementById('conn');
  if (view === null || conn === null) return;
  let snapshot: CrewSnapshot | null = null;
  let lanes: LaneView[] = [];
  let index = new Map<string, number>();
  let seq = -1;
  let timer: unknown = null;

  const readUi = (): ViewUi => {
    const params = new Map<string, string>();
    for (const part of String(win.location.hash).replace(/^#/, '').split('&')) {
      const at = part.indexOf('=');
      if (at <= 0) continue;
      try {
        params.set(part.slice(0, at), decodeURIComponent(part.slice(at + 1)));
      } catch {
        // A malformed escape is no filter.
      }
    }
    const page = Number(params.get('page') ?? '0');
    return { state: params.get('state') ?? '', code: params.get('code') ?? '', text: params.get('text') ?? '', sort: params.get('sort') ?? 'attention', page: Number.isInteger(page) && page >= 0 ? page : 0, acting: acts?.acting === true && snapshot?.run === 'running' };
  };
  const writeUi = (ui: ViewUi) => {
    const parts: string[] = [];
    if (ui.state !== '') parts.push(`state=${encodeURIComponent(ui.state)}`);
    if (ui.code !== '') parts.push(`code=${encodeURIComponent(ui.code)}`);
    if (ui.text !== '') parts.push(`text=${encodeURIComponent(ui.text)}`);
    if (ui.sort !== 'attention') parts.push(`sort=${encodeURIComponent(ui.sort)}`);
    if (ui.page > 0) parts.push(`page=${ui.page}`);
    win.location.hash = parts.join('&');
  };
  const draw = () => {
    timer = null;
    if (snapshot === null) return;
    view.innerHTML = render(snapshot, readUi());
    view.setAttribute('data-seq', String(seq));
    onSnapshot?.(snapshot);
    if (stop !== null) stop.hidden = !(acts?.acting === true && snapshot.run === 'running');
  };
  // Acting: one request at a time per button; what it came to is said in #act-result.
  const result = doc.getElementById('act-result');
  // Every action is a named person's: the name field (#act-by) is kept for the tab.
  const by = doc.getElementById('act-by');
  const bar = doc.getElementById('crew-actions');
  if (bar !== null) bar.hidden = acts?.acting !== true;
  if (by !== null && acts !== undefined) {
    by.value = acts.name();
    by.addEventListener?.('input', () => acts.setName(String(by.value ?? '').trim()));
  }
  const act = async (action: string, lane: string | null) => {
    if (acts === undefined) return;
    const name = String(by?.value ?? '').trim();
    const what = lane === null ? action : `${action} ${lane}`;
    if (name === '') {
      if (result !== null) result.textContent = `${what}: give your name first (the request is recorded as yours, human:<name>)`;
      return;
    }
    if (result !== null) result.textContent = `${what}: sending`;
    const sent = await acts.post(`/actions/${action}`, { ...(lane === null ? {} : { lane }), by: name });
    if (result !== null) {
      result.textContent = acts.describe(what, sent);
      result.setAttribute('data-status', String(sent.body.status ?? 'refused'));
    }
  };
  // Stopping the crew ends every lane's work: the first press arms the button, a second within 5 s stops.
  const stop = doc.getElementById('crew-stop');
  let armed = false;
  stop?.addEventListener?.('click', () => {
    if (!armed) {
      armed = true;
      stop.textContent = 'press again to stop the crew';
      win.setTimeout(() => {
        armed = false;
        stop.textContent = 'stop the crew';
      }, 5_000);
      return;
    }
    armed = false;
    stop.textContent = 'stop the crew';
    void act('stop', null);
  });
  const redraw = () => {
    if (timer === null) timer = win.setTimeout(draw, 250);
  };

  // The form: each field replaces its part of the filter and goes back to the first page.
  const controls = doc.getElementById('controls');
  const field = (id: string, key: 'state' | 'code' | 'text' | 'sort') => {
    const element = doc.getElementById(id);
    const ui = readUi();
    if (element === null) return;
    element.value = ui[key];
    element.addEventListener?.('input', () => writeUi({ ...readUi(), [key]: String(element.value ?? ''), page: 0 }));
  };
  if (controls !== null) {
    field('f-state', 'state');
    field('f-code', 'code');
    field('f-text', 'text');
    field('f-sort', 'sort');
    controls.addEventListener?.('submit', (event) => event.preventDefault());
  }
  view.addEventListener?.('click', (event) => {
    const action = event.target?.closest?.('[data-action]');
    if (action != null) {
      event.preventDefault();
      void act(String(action.getAttribute('data-action')), String(action.getAttribute('data-lane')));
      return;
    }
    const pageTo = event.target?.closest?.('[data-page-to]');
    if (pageTo != null) {
      event.preventDefault();
      writeUi({ ...readUi(), page: Number(pageTo.getAttribute('data-page-to')) });
      return;
    }
    const state = event.target?.closest?.('[data-filter-state]');
    if (state != null) {
      event.preventDefault();
      writeUi({ ...readUi(), state: String(state.getAttribute('data-filter-state')), page: 0 });
    }
  });
  win.addEventListener('hashchange', () => {
    const ui = readUi();
    for (const [id, key] of [['f-state', 'state'], ['f-code', 'code'], ['f-text', 'text'], ['f-sort', 'sort']] as const) {
      const element = doc.getElementById(id);
      if (element !== null && element.value !== ui[key]) element.value = ui[key];
    }
    if (snapshot !== null) draw();
  });

  let events: ClientEventSource;
  const connect = () => {
    events = new win.EventSource('/events');
    events.onmessage = (message) => {
      let event: ConsoleEvent;
      try {
        event = JSON.parse(message.data) as ConsoleEvent;
      } catch {
        return;
      }
      if (event.type === 'snapshot') {
        lanes = Array.isArray(event.snapshot.lanes) ? [...event.snapshot.lanes] : [];
        index = new Map(lanes.map((lane, i) => [lane.id, i]));
        snapshot = { ...event.snapshot, lanes };
      } else if (event.type === 'delta') {
        if (snapshot === null || event.from !== seq) {
          // A message was missed: start again from a whole snapshot.
          events.close();
          snapshot = null;
          connect();
          return;
        }
        for (const lane of event.lanes) {
          const at = index.get(lane.id);
          if (at === undefined) {
            index.set(lane.id, lanes.length);
            lanes.push(lane);
          } else lanes[at] = lane;
        }
        snapshot = { ...event.head, lanes };
      } else return;
      seq = event.seq;
      doc.title = `crew ${String(snapshot.crew)}${snapshot.done ? ' (done)' : ''}`;
      conn.textContent = snapshot.done ? 'finished' : 'live';
      if (snapshot.done) {
        events.close();
        draw();
      } else redraw();
    };
    events.onerror = () => {
      // EventSource reconnects by itself unless closed (readyState 2); a reconnect starts with a snapshot.
      conn.textContent = events.readyState === 2 ? 'disconnected' : 'reconnecting';
    };
  };
  connect();
}
