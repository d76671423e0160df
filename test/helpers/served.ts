import { type ChildProcess, spawn } from 'node:child_process';
import { BUNDLE } from './cli.ts';
import { exitOf } from './procs.ts';

/** A laneward command that serves the console: its URL once it printed `CREW_VIEW:`, its output and its exit. */
export interface Served {
  readonly child: ChildProcess;
  /** The console's base URL (`http://127.0.0.1:<port>/`), for paths under it. */
  readonly url: Promise<string>;
  /** The URL as printed: with `?token=<token>` where the console acts. */
  readonly openUrl: Promise<string>;
  readonly exited: Promise<number | null>;
  out(): string;
}

/** Starts the built CLI with `args` in `cwd`; the URL rejects if it exits before naming one. */
export function served(args: readonly string[], cwd: string): Served {
  const child = spawn(process.execPath, [BUNDLE, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk) => (stdout += chunk));
  const exited = exitOf(child).then(({ code }) => code);
  const openUrl = new Promise<string>((resolve, reject) => {
    child.stderr!.on('data', (chunk) => {
      stderr += chunk;
      const found = /^CREW_VIEW: (\S+)$/m.exec(stderr);
      if (found !== null) resolve(found[1]!);
    });
    void exited.then(() => reject(new Error(`exited before CREW_VIEW: ${stderr}`)));
  });
  const url = openUrl.then((printed) => printed.replace(/\?token=[^&#]*$/, ''));
  // Either may be left unawaited by a test: a crew that exits early is its own failure.
  url.catch(() => undefined);
  return { child, url, openUrl, exited, out: () => stdout };
}
