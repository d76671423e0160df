import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { killQuietly, liveGroupMembers, sleep } from './procs.ts';

// A headless Chromium driven over the DevTools protocol on a pipe (--remote-debugging-pipe):
// the browser reads NUL-terminated JSON commands on its fd 3 and answers on fd 4. No
// WebSocket, no port, no dependency. The browser runs in its own process group, which
// close() kills whole, so no renderer or zygote outlives the test.

/**
 * The Chromium binary: $LANEWARD_CHROMIUM, else `chromium` or `chromium-browser` on PATH;
 * or why there is none, in words for a skip line.
 */
export function findChromium(): { readonly binary: string } | { readonly missing: string } {
  const executable = (file: string) => {
    try {
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  const chosen = process.env['LANEWARD_CHROMIUM'];
  if (chosen !== undefined && chosen !== '') {
    return executable(chosen) ? { binary: chosen } : { missing: `LANEWARD_CHROMIUM=${chosen} is not an executable file` };
  }
  const binary = (process.env['PATH'] ?? '')
    .split(delimiter)
    .filter((dir) => dir !== '')
    .flatMap((dir) => [join(dir, 'chromium'), join(dir, 'chromium-browser')])
    .find(executable);
  return binary !== undefined
    ? { binary }
    : { missing: "no chromium or chromium-browser on PATH (install Debian's chromium; .ci/run does so as root)" };
}

interface Pending {
  readonly resolve: (result: Record<string, unknown>) => void;
  readonly reject: (error: Error) => void;
}

export class HeadlessBrowser {
  readonly pid: number;
  private readonly child: ChildProcess;
  private readonly profile: string;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private inbox = '';
  private stderrTail = '';
  private exited = false;
  private session: string | undefined;
  private readonly killGroup = () => killQuietly(-this.pid, 'SIGKILL');

  private constructor(child: ChildProcess, profile: string) {
    this.child = child;
    this.profile = profile;
    this.pid = child.pid!;
    // A browser killed (or crashing) resets its pipes: a read then fails ECONNRESET and a
    // write EPIPE, which with no listener is an uncaught exception in the test run (seen in
    // a full suite). The exit handler below rejects what was pending; the error says no more.
    for (const stream of [child.stdio[3], child.stdio[4], child.stderr]) stream?.on('error', () => undefined);
    const fromBrowser = child.stdio[4] as Readable;
    fromBrowser.setEncoding('utf8');
    fromBrowser.on('data', (chunk: string) => this.receive(chunk));
    (child.stderr as Readable).setEncoding('utf8');
    (child.stderr as Readable).on('data', (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-4000);
    });
    child.on('exit', () => {
      this.exited = true;
      for (const { reject } of this.pending.values()) reject(new Error(`chromium exited; stderr: ${this.stderrTail}`));
      this.pending.clear();
    });
  }

  /** Starts the browser with a fresh profile in a temp directory, `env` added to its environment. */
  static async launch(binary: string, env: NodeJS.ProcessEnv = {}): Promise<HeadlessBrowser> {
    const profile = mkdtempSync(join(tmpdir(), 'laneward-chromium-'));
    const child = spawn(
      binary,
      [
        '--headless=new',
        '--remote-debugging-pipe',
        `--user-data-dir=${profile}`,
        // Root has no usable sandbox here; the page is our own, served on loopback.
        '--no-sandbox',
        '--disable-gpu',
        '--disable-dev-shm-usage',
        '--no-first-run',
        '--no-default-browser-check',
        '--disable-extensions',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--mute-audio',
        'about:blank',
      ],
      // Its singleton socket's directory (org.chromium.Chromium.*) goes in TMPDIR: inside the profile, removed with it.
      { detached: true, stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'], env: { ...process.env, TMPDIR: profile, ...env } },
    );
    const browser = new HeadlessBrowser(child, profile);
    // Should the test process end without close() (a crash, a killed worker), the group goes with it.
    process.once('exit', browser.killGroup);
    try {
      await browser.send('Browser.getVersion', {}, 30_000);
      const { targetId } = await browser.send('Target.createTarget', { url: 'about:blank' });
      const { sessionId } = await browser.send('Target.attachToTarget', { targetId, flatten: true });
      browser.session = sessionId as string;
    } catch (error) {
      await browser.close();
      throw error;
    }
    return browser;
  }

  /** Sends one command (to the page's session once attached); rejects on a protocol error or after `ms`. */
  send(method: string, params: Record<string, unknown> = {}, ms = 15_000): Promise<Record<string, unknown>> {
    if (this.exited) return Promise.reject(new Error(`chromium exited; stderr: ${this.stderrTail}`));
    const id = this.nextId++;
    const message = { id, method, params, ...(this.session === undefined ? {} : { sessionId: this.session }) };
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`no answer to ${method} within ${ms} ms; stderr: ${this.stderrTail}`));
      }, ms);
      this.pending.set(id, {
        resolve: (result) => (clearTimeout(timer), resolve(result)),
        reject: (error) => (clearTimeout(timer), reject(error)),
      });
      (this.child.stdio[3] as Writable).write(`${JSON.stringify(message)}\0`);
    });
  }

  /** Opens `url` in the page and waits for its load to complete. */
  async navigate(url: string): Promise<void> {
    await this.send('Page.navigate', { url });
    await this.waitFor('document.readyState === "complete" && location.href === ' + JSON.stringify(url));
  }

  /** The value of `expression` evaluated in the page; a thrown exception rejects. */
  async evaluate<T>(expression: string): Promise<T> {
    const answer = await this.send('Runtime.evaluate', { expression, returnByValue: true });
    if (answer['exceptionDetails'] !== undefined) {
      throw new Error(`page threw evaluating ${expression}: ${JSON.stringify(answer['exceptionDetails'])}`);
    }
    return (answer['result'] as { value?: T }).value as T;
  }

  /** Saves a PNG of the page at `width` x `height` CSS pixels to `file`. */
  async screenshot(file: string, width = 1400, height = 900): Promise<void> {
    await this.send('Emulation.setDeviceMetricsOverride', { width, height, deviceScaleFactor: 1, mobile: false });
    const { data } = await this.send('Page.captureScreenshot', { format: 'png' }, 30_000);
    writeFileSync(file, Buffer.from(data as string, 'base64'));
  }

  /** Polls `expression` in the page until it is truthy; throws after `ms` naming it. */
  async waitFor(expression: string, ms = 20_000): Promise<void> {
    const end = Date.now() + ms;
    for (;;) {
      if (await this.evaluate<unknown>(expression)) return;
      if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for the page: ${expression}`);
      await sleep(25);
    }
  }

  /** Kills the browser's whole process group, waits until none of it runs, removes the profile. */
  async close(): Promise<void> {
    this.killGroup();
    const end = Date.now() + 10_000;
    while (liveGroupMembers(this.pid).length > 0 && Date.now() < end) await sleep(20);
    if (!this.exited) await new Promise((resolve) => this.child.once('exit', resolve));
    for (const stream of [this.child.stdio[3], this.child.stdio[4], this.child.stderr]) stream?.destroy();
    rmSync(this.profile, { recursive: true, force: true });
    process.off('exit', this.killGroup);
  }

  private receive(chunk: string): void {
    this.inbox += chunk;
    let end: number;
    while ((end = this.inbox.indexOf('\0')) >= 0) {
      const text = this.inbox.slice(0, end);
      this.inbox = this.inbox.slice(end + 1);
      const message = JSON.parse(text) as { id?: number; result?: Record<string, unknown>; error?: { message: string } };
      if (message.id === undefined) continue; // an event: nothing here subscribes
      const waiter = this.pending.get(message.id);
      this.pending.delete(message.id);
      if (message.error !== undefined) waiter?.reject(new Error(`DevTools: ${message.error.message}`));
      else waiter?.resolve(message.result ?? {});
    }
  }
}
