import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CrewSnapshot, SnapshotSource } from '../../formats/console/snapshot.ts';
import { EventLedger } from './event-ledger.ts';
import { PAGE_CSP, renderCrewPage } from './page.ts';
import { SseClient } from './sse-client.ts';
import { chooseCoding, codingStream, compressBody } from './compress.ts';
import type { LaneStory } from '../../formats/console/lane-story.ts';
import { ACTION_ROUTES, parseActionBody, type ConsoleActions, type ControlAction } from '../../formats/console/actions.ts';
import type { LaneGate } from '../../formats/console/gate-inbox.ts';
import type { LaneDiff } from '../../formats/console/lane-diff.ts';
import { mintToken, readBoundedBody, refuseAction } from './action-guard.ts';

export type { CrewSnapshot, LaneView, SnapshotSource } from '../../formats/console/snapshot.ts';

/** Tuning for tests; every field has a default fit for a real crew. */
export interface ServeOptions {
  /** Least time between two pushed messages (changes in between coalesce). Default 250 ms. */
  readonly minIntervalMs?: number;
  /** Time between heartbeat comments on each stream. Default 15 s. */
  readonly heartbeatMs?: number;
  /** A stream whose socket does not drain for this long is dropped. Default 10 s. */
  readonly stallMs?: number;
  /** Open streams at most; one more is refused with 503. Default 256. */
  readonly maxClients?: number;
  /** Renders a lane's page (a whole HTML document) and names its Content-Security-Policy. */
  readonly lanePage?: { readonly render: (story: LaneStory) => string; readonly csp: string };
  /**
   * What the console may change (retry, cancel, stop, answer): given, the server mints a
   * token, and POSTs to /actions/* that pass every check reach it; absent, the console
   * only shows the crew (CONSOLE_READ_ONLY).
   */
  readonly actions?: ConsoleActions;
  /** The token to require instead of a fresh one (tests). */
  readonly token?: string;
  /** Reads made on request, never per snapshot: a waiting lane's gate, a workspace lane's diff (undefined: no such lane). */
  readonly reads?: ConsoleReads;
}

/** The console's reads on request: `/lanes/<id>/gate.json` and `/lanes/<id>/diff.json`. */
export interface ConsoleReads {
  gate?(lane: string): LaneGate | undefined;
  diff?(lane: string): Promise<LaneDiff | undefined>;
}

export interface CrewServer {
  /** `http://127.0.0.1:<port>/` */
  readonly url: string;
  /** The token an action must carry (null: the server cannot act). */
  readonly token: string | null;
  /** The URL to open: `url` with `?token=<token>` when the server acts (the page keeps the token and drops it from the address bar). */
  readonly openUrl: string;
  /** Ends every event stream and the server; resolves once every connection is closed. */
  close(): Promise<void>;
}

const ROUTES = new Set(['/', '/events', '/snapshot.json']);
// /lanes/<id> and /lanes/<id>.json: the id is one path segment, percent-encoded. A literal
// ".json" ending asks for the JSON; a page link of a lane whose id ends in ".json" writes
// its dot as %2E, so every lane has both and no two URLs collide.
const LANE_ROUTE = /^\/lanes\/([^/]+)$/;
// A lane's reads on request: its gate for the inbox, its diff for its page.
const LANE_READ = /^\/lanes\/([^/]+)\/(gate|diff)\.json$/;
// Loopback names only: a page on another site that rebinds its name to 127.0.0.1 sends
// its own name as Host and is refused, so it cannot read the crew's lanes.
const LOOPBACK_HOST = /^(?:127\.0\.0\.1|localhost|\[::1\])(?::\d+)?$/i;
// After close() ends the streams, connections that have not closed by then are destroyed.
const CLOSE_GRACE_MS = 500;

/**
 * Serves the crew's console on 127.0.0.1 (`port` 0: any free port): `/` the crew page,
 * `/events` server-sent events (the whole crew on connect, then only what changed, at most
 * one message per `minIntervalMs`), `/snapshot.json`, and each lane's page `/lanes/<id>`
 * with its JSON `/lanes/<id>.json`. Other paths 404, other methods 405.
 */
export async function serveCrew(port: number, source: SnapshotSource, options: ServeOptions = {}): Promise<CrewServer> {
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new RangeError(`Expected \`port\` to be an integer from 0 to 65535, got \`${String(port)}\``);
  }
  const minIntervalMs = options.minIntervalMs ?? 250;
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  const stallMs = options.stallMs ?? 10_000;
  const maxClients = options.maxClients ?? 256;
  const token = options.actions === undefined ? null : (options.token ?? mintToken());
  // Loaded here, not at the top: a bundle hoists static imports of built-ins to its start,
  // and every CLI command would load the HTTP stack for a view only `crew run --serve` uses.
  const { createServer } = await import('node:http');

  const clients = new Set<SseClient>();
  const ledger = new EventLedger();
  let pushTimer: NodeJS.Timeout | undefined;
  let lastPush = -Infinity;
  let closing: Promise<void> | undefined;

  // Publishes the source's snapshot; a source that throws keeps the last good one.
  const publish = (): void => {
    try {
      ledger.publish(source.snapshot());
    } catch {
      // keep the ledger as it is
    }
  };
  const push = () => {
    pushTimer = undefined;
    lastPush = performance.now();
    publish();
    for (const client of clients) client.catchUp();
  };
  // Never reads the snapshot inside the source's own notification: it may be mid-update.
  const changed = () => {
    if (closing !== undefined || pushTimer !== undefined || clients.size === 0) return;
    pushTimer = setTimeout(push, Math.max(0, lastPush + minIntervalMs - performance.now()));
  };
  const unsubscribe = source.subscribe(changed);
  const heartbeat = setInterval(() => {
    for (const client of clients) client.heartbeat();
  }, heartbeatMs);
  heartbeat.unref();

  const openEvents = (req: IncomingMessage, res: ServerResponse) => {
    if (clients.size >= maxClients) {
      reply(res, 503, 'text/plain; charset=utf-8', 'too many event streams\n', { 'Retry-After': '5' });
      return;
    }
    const coding = chooseCoding(req.headers['accept-encoding']);
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
      Vary: 'Accept-Encoding',
      ...(coding === null ? {} : { 'Content-Encoding': coding }),
    });
    // The stream is open from now, whether or not a snapshot can be read yet.
    res.flushHeaders();
    const client = new SseClient(res, {
      since: (from) => ({ seq: ledger.current, data: ledger.since(from) }),
      stallMs,
      onGone: (gone) => clients.delete(gone),
      ...(coding === null ? {} : { encoder: codingStream(coding) }),
    });
    clients.add(client);
    // A first viewer may find the ledger behind the source: it starts from what is true now.
    if (clients.size === 1 || ledger.current === 0) publish();
    client.catchUp();
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    // A client gone mid-write surfaces here and on the socket; either way it is only gone.
    res.on('error', () => undefined);
    const path = (req.url ?? '/').split('?')[0]!;
    if (!LOOPBACK_HOST.test(req.headers.host ?? '')) return reply(res, 403, 'text/plain; charset=utf-8', 'forbidden host\n');
    if (Object.hasOwn(ACTION_ROUTES, path)) return void actionRoute(req, res, ACTION_ROUTES[path]!);
    const read = LANE_READ.exec(path);
    if (read !== null) {
      if (req.method !== 'GET') return reply(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n', { Allow: 'GET' });
      return void readRoute(res, read[1]!, read[2] as 'gate' | 'diff');
    }
    const lane = LANE_ROUTE.exec(path);
    if (!ROUTES.has(path) && lane === null) return reply(res, 404, 'text/plain; charset=utf-8', 'not found\n');
    if (req.method !== 'GET') return reply(res, 405, 'text/plain; charset=utf-8', 'method not allowed\n', { Allow: 'GET' });
    if (closing !== undefined) return reply(res, 503, 'text/plain; charset=utf-8', 'closing\n');
    if (lane !== null) {
      const segment = lane[1]!;
      const json = segment.endsWith('.json');
      return laneRoute(res, json ? segment.slice(0, -'.json'.length) : segment, json);
    }
    if (path === '/events') return openEvents(req, res);
    let snapshot: CrewSnapshot | undefined;
    try {
      snapshot = source.snapshot();
    } catch {
      // The JSON falls back to the last snapshot sent; the page is rendered from a fresh one or not at all.
      snapshot = path === '/snapshot.json' ? ledger.last() : undefined;
      if (snapshot === undefined) return reply(res, 500, 'text/plain; charset=utf-8', 'snapshot unavailable\n');
    }
    if (path === '/snapshot.json') {
      // A 5,000-lane snapshot is a megabyte of JSON: compressed when the client takes it.
      const coding = chooseCoding(req.headers['accept-encoding']);
      return reply(res, 200, 'application/json; charset=utf-8', `${JSON.stringify(snapshot)}\n`, { Vary: 'Accept-Encoding' }, coding);
    }
    return reply(res, 200, 'text/html; charset=utf-8', renderCrewPage(snapshot), { 'Content-Security-Policy': PAGE_CSP });
  });
  const laneRoute = (res: ServerResponse, encoded: string, json: boolean) => {
    let id: string;
    try {
      id = decodeURIComponent(encoded);
    } catch {
      return reply(res, 400, 'text/plain; charset=utf-8', 'bad lane id\n');
    }
    let story: LaneStory | undefined;
    try {
      story = source.laneStory?.(id);
    } catch {
      return reply(res, 500, 'text/plain; charset=utf-8', 'lane unavailable\n');
    }
    if (story === undefined) return reply(res, 404, 'text/plain; charset=utf-8', 'no such lane\n');
    if (json || options.lanePage === undefined) return reply(res, json ? 200 : 404, json ? 'application/json; charset=utf-8' : 'text/plain; charset=utf-8', json ? `${JSON.stringify(story)}\n` : 'not found\n');
    return reply(res, 200, 'text/html; charset=utf-8', options.lanePage.render(story), { 'Content-Security-Policy': options.lanePage.csp });
  };
  // Every request that changes anything: POST, a loopback Host (checked above), this
  // console's own Origin, its token, a JSON body within the bound. Refusals are JSON with a
  // code; nothing reaches the port before every check passed.
  const actionRoute = async (req: IncomingMessage, res: ServerResponse, action: ControlAction | 'answer') => {
    if (req.method !== 'POST') return refuse(res, 405, 'CONSOLE_ACTION_METHOD', `${String(req.method)} changes nothing: an action is a POST`, { Allow: 'POST' });
    if (closing !== undefined) return refuse(res, 503, 'CONSOLE_READ_ONLY', 'the console is closing');
    if (options.actions === undefined || token === null) return refuse(res, 403, 'CONSOLE_READ_ONLY', 'this console only shows the crew');
    const refusal = refuseAction(req, token);
    if (refusal !== null) return refuse(res, refusal.status, refusal.code, refusal.detail);
    const text = await readBoundedBody(req);
    if (text === null) return refuse(res, 413, 'CONSOLE_BODY_INVALID', 'the body is larger than the bound');
    const parsed = parseActionBody(action, text);
    if (parsed.kind === 'refused') return refuse(res, 400, 'CONSOLE_BODY_INVALID', parsed.detail);
    try {
      if (parsed.kind === 'control') {
        const result = await options.actions.control(parsed.request);
        return jsonReply(res, result.status === 'requested' ? 200 : 409, { action: parsed.request.action, lane: parsed.request.lane, ...result });
      }
      const answers = await options.actions.answer(parsed.lanes, parsed.reply, parsed.by);
      return jsonReply(res, 200, { status: 'answered', answers });
    } catch (error) {
      const code = typeof (error as { code?: unknown })?.code === 'string' ? (error as { code: string }).code : 'INTERNAL';
      return jsonReply(res, code === 'INTERNAL' ? 500 : 400, { status: 'refused', code, detail: error instanceof Error ? error.message : String(error) });
    }
  };
  const readRoute = async (res: ServerResponse, encoded: string, what: 'gate' | 'diff') => {
    let id: string;
    try {
      id = decodeURIComponent(encoded);
    } catch {
      return reply(res, 400, 'text/plain; charset=utf-8', 'bad lane id\n');
    }
    let value: LaneGate | LaneDiff | undefined;
    try {
      value = what === 'gate' ? options.reads?.gate?.(id) : await options.reads?.diff?.(id);
    } catch {
      return reply(res, 500, 'text/plain; charset=utf-8', 'lane unavailable\n');
    }
    if (value === undefined) return reply(res, 404, 'text/plain; charset=utf-8', 'no such lane\n');
    return jsonReply(res, 200, value);
  };
  server.on('clientError', (_error, socket) => socket.destroy());

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  }).catch((error: unknown) => {
    unsubscribe();
    clearInterval(heartbeat);
    throw error;
  });
  const { port: bound } = server.address() as AddressInfo;

  const close = (): Promise<void> => {
    closing ??= new Promise<void>((resolve) => {
      unsubscribe();
      clearInterval(heartbeat);
      if (pushTimer !== undefined) clearTimeout(pushTimer);
      for (const client of clients) client.end();
      // close() stops listening and drops idle keep-alive sockets; a stream that cannot
      // flush its end (a stalled reader) is destroyed after the grace.
      server.close(() => resolve());
      server.closeIdleConnections();
      setTimeout(() => server.closeAllConnections(), CLOSE_GRACE_MS).unref();
    });
    return closing;
  };
  const url = `http://127.0.0.1:${bound}/`;
  return { url, token, openUrl: token === null ? url : `${url}?token=${token}`, close };
}

function jsonReply(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  reply(res, status, 'application/json; charset=utf-8', `${JSON.stringify(value)}\n`, headers);
}

/** A refused action: its code and why, as JSON; the connection closes (a body may be left unread). */
function refuse(res: ServerResponse, status: number, code: string, detail: string, headers: Record<string, string> = {}): void {
  jsonReply(res, status, { status: 'refused', code, detail }, { Connection: 'close', ...headers });
}

function reply(res: ServerResponse, status: number, type: string, text: string, headers: Record<string, string> = {}, coding: ReturnType<typeof chooseCoding> = null): void {
  const body = coding === null ? text : compressBody(text, coding);
  res.writeHead(status, {
    'Content-Type': type,
    'Content-Length': Buffer.byteLength(body),
    ...(coding === null ? {} : { 'Content-Encoding': coding }),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    ...headers,
  });
  res.end(body);
}
