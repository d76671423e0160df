import { type ClientRequest, type IncomingMessage, request } from 'node:http';
import { until } from './procs.ts';

/** One raw HTTP answer. */
export interface Answer {
  readonly status: number;
  readonly headers: IncomingMessage['headers'];
  readonly body: string;
}

/** A plain request on its own connection (no agent), answered whole. */
export function httpRequest(url: string, options: { method?: string; host?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: options.method ?? 'GET', agent: false, headers: options.host ? { host: options.host } : {} }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** An open /events stream that records what arrives: raw text, then its events split on blank lines. */
export class EventStream {
  raw = '';
  ended = false;
  status = 0;
  headers: IncomingMessage['headers'] = {};
  readonly req: ClientRequest;
  private res: IncomingMessage | undefined;

  private constructor(url: string, ready: (stream: EventStream) => void, fail: (error: Error) => void) {
    this.req = request(url, { agent: false }, (res) => {
      this.res = res;
      this.status = res.statusCode!;
      this.headers = res.headers;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (this.raw += chunk));
      res.on('end', () => (this.ended = true));
      res.on('error', () => (this.ended = true));
      res.on('close', () => (this.ended = true));
      ready(this);
    });
    this.req.on('error', fail);
    this.req.end();
  }

  static open(url: string): Promise<EventStream> {
    return new Promise((resolve, reject) => new EventStream(url, resolve, reject));
  }

  /** Complete events so far, each as its lines. */
  get events(): string[][] {
    const blocks = this.raw.split('\n\n');
    blocks.pop(); // the incomplete tail
    return blocks.map((block) => block.split('\n'));
  }

  /** The JSON of every data event so far: console messages ({type: snapshot|delta, seq, ...}). */
  get messages(): Record<string, unknown>[] {
    return this.events.flatMap((lines) => lines.filter((line) => line.startsWith('data: ')).map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>));
  }

  /**
   * The whole crew after each message, as a page applying them sees it: a snapshot
   * message replaces it, a delta that follows the last message applied updates it. A
   * delta that does not follow throws: the server sent what no client could apply.
   */
  get snapshots(): unknown[] {
    const seen: unknown[] = [];
    let current: { lanes: { id: string }[] } | undefined;
    let seq = -1;
    for (const message of this.messages) {
      if (message['type'] === 'snapshot') current = structuredClone(message['snapshot']) as typeof current;
      else {
        if (current === undefined || message['from'] !== seq) throw new Error(`delta from ${String(message['from'])} after message ${seq}`);
        const lanes = [...current.lanes];
        const index = new Map(lanes.map((l, i) => [l.id, i]));
        for (const lane of message['lanes'] as { id: string }[]) {
          const at = index.get(lane.id);
          if (at === undefined) lanes.push(lane);
          else lanes[at] = lane;
        }
        current = { ...(structuredClone(message['head']) as object), lanes } as typeof current;
      }
      seq = message['seq'] as number;
      seen.push(current);
    }
    return seen;
  }

  async waitForSnapshots(n: number, ms = 5_000): Promise<unknown[]> {
    await until(() => this.snapshots.length >= n, ms, `${n} snapshot events (have ${this.snapshots.length})`);
    return this.snapshots;
  }

  /** Drops the connection from the client side. */
  destroy(): void {
    this.res?.destroy();
    this.req.destroy();
  }
}
