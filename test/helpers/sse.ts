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

  /** The JSON of every data event so far. */
  get snapshots(): unknown[] {
    return this.events.filter((lines) => lines[0]!.startsWith('data: ')).map((lines) => JSON.parse(lines[0]!.slice(6)));
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
