import type { CrewSnapshot } from '../../formats/console/snapshot.ts';

// The page's script: runs in the browser, from this function's source text (see
// main/console/page.ts). Self-contained: it reaches the DOM only through `win` and renders
// only through `render`, so it names nothing from this module or any other.

interface ClientElement {
  innerHTML: string;
  textContent: string | null;
  setAttribute(name: string, value: string): void;
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
}

/**
 * Subscribes to /events and re-renders the view for every snapshot (no reload). `#conn`
 * says whether the stream is live; `#view[data-seq]` counts the snapshots rendered. A done
 * snapshot closes the stream, so the browser does not reconnect to a finished crew.
 */
export function crewClient(win: ClientWindow, render: (snapshot: CrewSnapshot) => string): void {
  const view = win.document.getElementById('view');
  const conn = win.document.getElementById('conn');
  if (view === null || conn === null) return;
  let seq = 0;
  const events = new win.EventSource('/events');
  events.onmessage = (event) => {
    let snapshot: CrewSnapshot;
    try {
      snapshot = JSON.parse(event.data) as CrewSnapshot;
    } catch {
      return;
    }
    view.innerHTML = render(snapshot);
    seq += 1;
    view.setAttribute('data-seq', String(seq));
    win.document.title = `crew ${String(snapshot.crew)}${snapshot.done ? ' (done)' : ''}`;
    if (snapshot.done) events.close();
    conn.textContent = snapshot.done ? 'finished' : 'live';
  };
  events.onerror = () => {
    // EventSource reconnects by itself unless closed (readyState 2).
    conn.textContent = events.readyState === 2 ? 'disconnected' : 'reconnecting';
  };
}
