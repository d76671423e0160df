import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CREW_WORDS } from '../main/cli/crew-lines.ts';
import { crewRun, type CrewOutput } from '../main/crew/crew-run.ts';
import { writeDemoCrew } from '../main/demo/demo-crew.ts';
import { line, ratio } from './measure.ts';

// The bundled bench (dist/bench.mjs) starts its own viewers' process.
const BENCH = fileURLToPath(new URL('./bench.mjs', import.meta.url));

interface Window {
  /** Lanes that ended inside the window. */
  readonly lanes: number;
  readonly seconds: number;
  /** Per viewer: bytes of events after the first message, and the first message's size. */
  readonly viewers: { readonly bytes: number; readonly first: number; readonly messages: number }[];
}

/**
 * One crew of `lanes` instant lanes served on a free port, with `viewers` event streams
 * opened by a separate process (so their reading costs the crew nothing but the serving),
 * measured from `warmS` seconds after the start for `windowS` seconds, then stopped.
 */
async function crewWindow(dir: string, lanes: number, viewers: number, warmS: number, windowS: number): Promise<Window> {
  const file = writeDemoCrew({ dir, crew: `console-${lanes}-${viewers}`, lanes, broken: 0, concurrency: 8, instant: true });
  const stop = new AbortController();
  const ends: number[] = [];
  let found: (value: string) => void = () => undefined;
  const url = new Promise<string>((resolve) => (found = resolve));
  const output: CrewOutput = {
    event: (event) => {
      if (event.type === 'lane_ended') ends.push(performance.now());
      if (event.type === 'served') found(event.url);
    },
    words: CREW_WORDS,
    errRaw: () => undefined,
    stderrIsTTY: false,
  };
  const started = performance.now();
  const running = crewRun({ file, cwd: dir, env: process.env, state: join(dir, 'state'), threads: 2, deadlineMs: undefined, serve: 0, report: undefined, cancel: stop.signal }, output);
  const base = await url;
  const reader = viewers === 0 ? undefined : viewerProcess(`${base}events`, viewers, warmS, windowS);
  await new Promise((resolve) => setTimeout(resolve, (warmS + windowS) * 1000 - (performance.now() - started)));
  const from = started + warmS * 1000;
  const to = started + (warmS + windowS) * 1000;
  stop.abort('SIGTERM');
  await running.catch(() => undefined);
  return { lanes: ends.filter((t) => t >= from && t < to).length, seconds: windowS, viewers: reader === undefined ? [] : await reader };
}

/** Starts the viewers' process; resolves with what each viewer read in the window. */
function viewerProcess(url: string, n: number, warmS: number, windowS: number): Promise<Window['viewers']> {
  const child = spawn(process.execPath, [BENCH, 'viewers-worker', url, String(n), String(warmS), String(windowS)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  return new Promise((resolve, reject) => child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`viewers exited ${code}`)))));
}

/**
 * The viewers' side: `n` event streams on `url`, each counting the bytes that arrive,
 * apart from its first message (the whole crew, once); the count runs from `warmS` for
 * `windowS` seconds after the process started. Prints one JSON array.
 */
export async function viewersWorker(argv: readonly string[]): Promise<void> {
  const [url, n, warmS, windowS] = [argv[0]!, Number(argv[1]), Number(argv[2]), Number(argv[3])];
  const start = performance.now();
  const counts = Array.from({ length: n }, () => ({ bytes: 0, first: 0, messages: 0, text: '' }));
  const requests = counts.map((count) =>
    request(url, { agent: false }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        const now = performance.now() - start;
        if (count.first === 0) {
          count.text += chunk;
          const end = count.text.indexOf('\n\n');
          if (end === -1) return;
          count.first = end + 2;
          chunk = count.text.slice(end + 2);
          count.text = '';
        }
        if (now >= warmS * 1000 && now < (warmS + windowS) * 1000) {
          count.bytes += Buffer.byteLength(chunk);
          count.messages += chunk.split('\n\n').length - 1;
        }
      });
      res.on('error', () => undefined);
    }),
  );
  for (const req of requests) {
    req.on('error', () => undefined);
    req.end();
  }
  await new Promise((resolve) => setTimeout(resolve, (warmS + windowS) * 1000 + 200));
  for (const req of requests) req.destroy();
  process.stdout.write(JSON.stringify(counts.map(({ bytes, first, messages }) => ({ bytes, first, messages }))));
}

/**
 * The console: what one viewer of a 5,000-lane crew receives per second at steady state,
 * against what whole snapshots at the same pace would cost; and the crew's lanes per
 * minute with 200 viewers against none, in the same run.
 */
export async function benchConsole(options: { lanes: number; viewers: number; windowS: number }): Promise<void> {
  const dir = mkdtempSync(join(process.env['LANEWARD_BENCH_TMP'] ?? tmpdir(), 'laneward-bench-console-'));
  try {
    const warmS = 5;
    const alone = await crewWindow(join(dir, 'alone'), options.lanes, 0, warmS, options.windowS);
    const one = await crewWindow(join(dir, 'one'), options.lanes, 1, warmS, options.windowS);
    const many = await crewWindow(join(dir, 'many'), options.lanes, options.viewers, warmS, options.windowS);
    const viewer = one.viewers[0]!;
    const perSecond = viewer.bytes / one.seconds;
    const wholePerSecond = (viewer.first * viewer.messages) / one.seconds;
    line(
      `one viewer of ${options.lanes} lanes`,
      `${(perSecond / 1000).toFixed(1)} KB/s in ${viewer.messages} messages over ${one.seconds} s (target < 20 KB/s), after a first snapshot of ${(viewer.first / 1000).toFixed(0)} KB; whole snapshots at that pace: ${(wholePerSecond / 1000).toFixed(0)} KB/s (${ratio(perSecond, wholePerSecond)})`,
    );
    const rate = (w: Window) => (w.lanes / w.seconds) * 60;
    const slowest = Math.min(...many.viewers.map((v) => v.bytes));
    line(
      `${options.viewers} viewers`,
      `${rate(many).toFixed(0)} lanes/min against ${rate(alone).toFixed(0)} with none (${ratio(rate(many), rate(alone))}; target: cost under 5%), 1 viewer ${rate(one).toFixed(0)} lanes/min; ${many.viewers.length} streams, the slowest read ${(slowest / 1000 / many.seconds).toFixed(1)} KB/s`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
