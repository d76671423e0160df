import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// A real redis-server per test file, on a loopback port, its files in a temp directory.
// Without redis-server on PATH the tests that need it skip, saying why (.ci/run installs
// Debian's redis-server as root).

/** Why there is no redis-server to start, or undefined when there is one. */
export function redisMissing(): string | undefined {
  const found = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  return found.status === 0 ? undefined : "no redis-server on PATH (install Debian's redis-server; .ci/run does so as root)";
}

export interface RedisServer {
  readonly url: string;
  readonly port: number;
  readonly dir: string;
  /** Stops it (SIGTERM, then SIGKILL after 5 s); with `kill`, at once, as a crash would. */
  stop(kill?: boolean): Promise<void>;
  /** Starts it again on the same port and directory (its append-only file, when on, is loaded). */
  restart(): Promise<void>;
  /** Stops it and removes its directory. */
  close(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export async function startRedis(options: { appendonly?: boolean } = {}): Promise<RedisServer> {
  const dir = mkdtempSync(join(tmpdir(), 'laneward-redis-'));
  const port = await freePort();
  let child: ChildProcess | undefined;
  const launch = async () => {
    const args = ['--bind', '127.0.0.1', '--port', String(port), '--dir', dir, '--save', '', '--appendonly', options.appendonly === true ? 'yes' : 'no', '--appendfsync', 'always', '--protected-mode', 'yes', '--daemonize', 'no', '--loglevel', 'warning'];
    const started = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    child = started;
    let out = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`redis-server did not start on ${port}: ${out}`)), 10_000);
      const ready = async () => {
        // Ready once it answers: poll PING over a raw socket.
        const { connect } = await import('node:net');
        for (;;) {
          const ok = await new Promise<boolean>((done) => {
            const socket = connect(port, '127.0.0.1');
            socket.once('error', () => done(false));
            socket.once('connect', () => socket.write('PING\r\n'));
            socket.once('data', (data) => {
              socket.destroy();
              done(data.toString().startsWith('+PONG'));
            });
          });
          if (ok) break;
          if (started.exitCode !== null) return;
          await new Promise((r) => setTimeout(r, 20));
        }
        clearTimeout(timer);
        resolve();
      };
      started.stdout!.on('data', (chunk) => (out += chunk));
      started.stderr!.on('data', (chunk) => (out += chunk));
      started.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`redis-server exited ${code}: ${out}`));
      });
      void ready();
    });
  };
  const stop = async (kill = false) => {
    const running = child;
    child = undefined;
    if (running === undefined || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill(kill ? 'SIGKILL' : 'SIGTERM');
    const timer = setTimeout(() => running.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  };
  await launch();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    dir,
    stop,
    restart: launch,
    close: async () => {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
