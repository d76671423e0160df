// Run by `npm test` before vitest: makes sure test/real-clis/node_modules holds the agent
// CLIs at exactly the versions test/real-clis/package.json pins (formats/providers/pins.ts
// pins the same; test/providers-cli.test.ts checks), and runs `npm ci` there when any is
// missing or answers another version. No shell: every program is spawned with an argv.
// `node scripts/real-clis.mjs [DIR]` checks DIR instead (default test/real-clis).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const dir = resolve(process.argv[2] ?? join(root, 'test', 'real-clis'));
// The program each package installs into node_modules/.bin.
const BINARIES = { '@anthropic-ai/claude-code': 'claude', '@openai/codex': 'codex', '@google/gemini-cli': 'gemini' };
// --ignore-scripts keeps every package's install scripts from running, but claude-code's
// bin/claude.exe is only a stub until its install.cjs links in the native binary npm
// already fetched (no download): that one script is run by hand (pins.ts says the same).
const POSTINSTALL = { '@anthropic-ai/claude-code': 'install.cjs' };

const pins = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).dependencies ?? {};
const stale = [];
for (const [name, binary] of Object.entries(BINARIES)) {
  const wanted = pins[name];
  if (wanted === undefined) fail(`${join(dir, 'package.json')} does not pin ${name}`);
  const bin = join(dir, 'node_modules', '.bin', binary);
  const version = versionOf(bin);
  if (version !== wanted) stale.push(`${binary} ${version ?? (existsSync(bin) ? 'gives no version' : 'missing')}, pinned ${wanted}`);
}
if (stale.length > 0) {
  const started = performance.now();
  process.stdout.write(`real-clis: npm ci in ${dir} (${stale.join('; ')}) ...`);
  const run = spawnSync('npm', ['ci', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  if (run.error !== undefined || run.status !== 0) {
    process.stdout.write(` failed after ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
    fail(`npm ci failed (${run.error?.message ?? `exit ${run.status ?? run.signal}`}): ${(run.stderr ?? '').trim().split('\n').slice(-5).join(' | ')}`);
  }
  for (const [name, script] of Object.entries(POSTINSTALL)) {
    const packageDir = join(dir, 'node_modules', name);
    const ran = spawnSync(process.execPath, [join(packageDir, script)], { cwd: packageDir, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
    if (ran.error !== undefined || ran.status !== 0) {
      process.stdout.write(' failed\n');
      fail(`${name}'s ${script} failed (${ran.error?.message ?? `exit ${ran.status ?? ran.signal}`}): ${(ran.stderr ?? '').trim().split('\n').slice(-5).join(' | ')}`);
    }
  }
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  process.stdout.write(` done in ${seconds} s\n`);
  for (const [name, binary] of Object.entries(BINARIES)) {
    const version = versionOf(join(dir, 'node_modules', '.bin', binary));
    if (version !== pins[name]) fail(`after npm ci, ${binary} --version gives ${version ?? 'nothing'}, not ${pins[name]}`);
  }
}

/** What `<bin> --version` prints as a version number, within 5 s and with no API key; null when nothing. */
function versionOf(bin) {
  const env = { ...process.env };
  for (const key of ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'CODEX_API_KEY', 'GEMINI_API_KEY']) delete env[key];
  const run = spawnSync(bin, ['--version'], { stdio: ['ignore', 'pipe', 'ignore'], encoding: 'utf8', env, timeout: 5_000, killSignal: 'SIGKILL' });
  if (run.error !== undefined || run.status !== 0) return null;
  return /\b(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)\b/.exec(run.stdout)?.[1] ?? null;
}

function fail(message) {
  process.stderr.write(`real-clis: ${message}\n`);
  process.exit(1);
}
