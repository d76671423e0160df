import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, test } from 'vitest';
import { PROVIDER_PINS, packageSpec } from '../formats/providers/pins.ts';
import { BUNDLE, codesOf, ensureBuilt, ROOT } from './helpers/cli.ts';
import { tempRoot } from './helpers/tmp.ts';

const root = tempRoot('providers-cli');
beforeAll(ensureBuilt);

const [CLAUDE, CODEX, GEMINI] = PROVIDER_PINS as [(typeof PROVIDER_PINS)[number], (typeof PROVIDER_PINS)[number], (typeof PROVIDER_PINS)[number]];
const SECRET = 'sk-test-never-printed-4f1c9';

/**
 * The few system programs the fake scripts use, alone in one directory: PATH is then
 * that directory and the test's own, so no agent CLI installed on the machine is found.
 */
const sysBin = join(root, 'sys');
mkdirSync(sysBin);
for (const tool of ['sh', 'mkdir', 'cat', 'chmod', 'sleep', 'kill']) {
  const found = spawnSync('/bin/sh', ['-c', 'command -v "$1"', 'sh', tool], { encoding: 'utf8' }).stdout.trim();
  if (found !== '' && found.startsWith('/')) symlinkSync(found, join(sysBin, tool));
}

let n = 0;
/** A fresh directory under the temp root. */
function fresh(name: string): string {
  const dir = join(root, `${name}-${n++}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

function writeScript(file: string, text: string): string {
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, text);
  chmodSync(file, 0o755);
  return file;
}

/** A fake CLI printing `output` for --version; it writes the key it was given to `keyLog`. */
function fakeCli(dir: string, binary: string, output: string, keyLog?: string): string {
  const log = keyLog === undefined ? '' : `printf '%s' "\${ANTHROPIC_API_KEY-none}\${OPENAI_API_KEY-none}\${GEMINI_API_KEY-none}" > '${keyLog}'\n`;
  return writeScript(join(dir, binary), `#!/bin/sh\n${log}printf '%s\\n' '${output}'\n`);
}

/**
 * A fake npm: records its argv (one word a line, then `--`) to $FAKE_NPM_LOG, then for
 * `install --prefix DIR <specs>` makes each spec's bin in DIR/node_modules/.bin answer its
 * version (or $FAKE_NPM_VERSION) and gives claude-code an install.cjs that leaves a mark;
 * $FAKE_NPM_MODE fail: exits 7 with an npm error; kill: makes the bins, then kills laneward.
 */
function fakeNpm(dir: string): string {
  const cases = PROVIDER_PINS.map((pin) => `    ${pin.packageName}@*) make '${pin.binary}' "\${a##*@}" ;;`).join('\n');
  return writeScript(
    join(dir, 'npm'),
    `#!/bin/sh
{ for a in "$@"; do printf '%s\\n' "$a"; done; printf -- '--\\n'; } >> "$FAKE_NPM_LOG"
[ -n "$FAKE_NPM_SLEEP" ] && sleep "$FAKE_NPM_SLEEP"
if [ "$FAKE_NPM_MODE" = fail ]; then echo 'npm error 404 Not Found - GET https://registry.example/x' >&2; exit 7; fi
prefix=""; prev=""
for a in "$@"; do [ "$prev" = --prefix ] && prefix="$a"; prev="$a"; done
make() {
  mkdir -p "$prefix/node_modules/.bin"
  printf '#!/bin/sh\\n[ -n "$FAKE_CLI_SLOW" ] && sleep "$FAKE_CLI_SLOW"\\nprintf "%%s\\\\n" "%s (fake)"\\n' "\${FAKE_NPM_VERSION:-$2}" > "$prefix/node_modules/.bin/$1"
  chmod +x "$prefix/node_modules/.bin/$1"
}
for a in "$@"; do
  case "$a" in
${cases}
  esac
  case "$a" in
    ${CLAUDE.packageName}@*)
      mkdir -p "$prefix/node_modules/${CLAUDE.packageName}"
      printf "require('fs').writeFileSync('postinstall-ran', process.cwd())\\n" > "$prefix/node_modules/${CLAUDE.packageName}/${CLAUDE.postinstall}" ;;
  esac
done
if [ "$FAKE_NPM_MODE" = kill ]; then kill -9 $PPID; fi
exit 0
`,
  );
}

interface Run {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** `laneward providers ...` with exactly `env` (plus the PATH given) in `cwd`. */
function providers(args: readonly string[], options: { cwd: string; path: readonly string[]; env?: Record<string, string> }): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BUNDLE, 'providers', ...args], {
      cwd: options.cwd,
      env: { PATH: options.path.join(':'), HOME: options.cwd, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const line = (pin: (typeof PROVIDER_PINS)[number], cli: string | null, found: string, version: string | null, key = 'unset') =>
  `PROVIDER: preset=${pin.preset} cli=${cli ?? 'missing'} found=${found} version=${version ?? 'unknown'} pinned=${pin.version} key=${key}`;

/** The last line when PATH holds no bwrap (these tests' PATH never does unless they put one there). */
const NO_SANDBOX = 'SANDBOX: sandbox=none reason=bwrap is not on PATH (install bubblewrap); agents run uncontained';

const npmArgvOf = (log: string) =>
  existsSync(log)
    ? readFileSync(log, 'utf8')
        .split('--\n')
        .filter((run) => run !== '')
        .map((run) => run.split('\n').filter((word) => word !== ''))
    : [];

describe('the pins', () => {
  test('should pin in test/real-clis/package.json exactly the versions the presets pin', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'test', 'real-clis', 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(pkg.dependencies).toEqual(Object.fromEntries(PROVIDER_PINS.map((pin) => [pin.packageName, pin.version])));
    expect(PROVIDER_PINS.map((pin) => [pin.preset, pin.binary, pin.version])).toEqual([
      ['claude-code', 'claude', '2.1.328'],
      ['codex', 'codex', '0.169.0'],
      ['gemini-cli', 'gemini', '0.61.0'],
    ]);
    expect(PROVIDER_PINS.map((pin) => pin.keyEnv)).toEqual([['ANTHROPIC_API_KEY'], ['OPENAI_API_KEY', 'CODEX_API_KEY'], ['GEMINI_API_KEY']]);
  });
});

describe('laneward providers: the report', () => {
  test('should find a CLI on PATH with its version, report the others missing, and exit 0', async () => {
    const bin = fresh('bin');
    const claude = fakeCli(bin, 'claude', '2.1.328 (Claude Code)');
    const codex = fakeCli(bin, 'codex', 'codex-cli 0.170.1');
    const run = await providers([], { cwd: fresh('cwd'), path: [bin, sysBin] });
    expect(run).toEqual({
      code: 0,
      stdout: `${[line(CLAUDE, claude, 'path', '2.1.328'), line(CODEX, codex, 'path', '0.170.1'), line(GEMINI, null, 'missing', null), NO_SANDBOX].join('\n')}\n`,
      stderr: '',
    });
  });

  test('should say version=unknown for a CLI that prints none, fails, or hangs past 5 s', async () => {
    const bin = fresh('bin');
    const claude = fakeCli(bin, 'claude', 'no version here');
    const codex = writeScript(join(bin, 'codex'), '#!/bin/sh\necho 0.169.0\nexit 3\n');
    const gemini = writeScript(join(bin, 'gemini'), '#!/bin/sh\nsleep 30\necho 0.61.0\n');
    const started = Date.now();
    const run = await providers([], { cwd: fresh('cwd'), path: [bin, sysBin] });
    expect(Date.now() - started).toBeLessThan(20_000);
    expect(run.code).toBe(0);
    expect(run.stdout.split('\n').slice(0, 3)).toEqual([line(CLAUDE, claude, 'path', null), line(CODEX, codex, 'path', null), line(GEMINI, gemini, 'path', null)]);
  });

  test('should say key=set without printing the key, and not pass it to the --version probe', async () => {
    const bin = fresh('bin');
    const keyLog = join(bin, 'key.log');
    const claude = fakeCli(bin, 'claude', '2.1.328 (Claude Code)', keyLog);
    const env = { ANTHROPIC_API_KEY: SECRET, CODEX_API_KEY: SECRET, GEMINI_API_KEY: '' };
    const text = await providers([], { cwd: fresh('cwd'), path: [bin, sysBin], env });
    expect(text.stdout).toBe(
      `${[line(CLAUDE, claude, 'path', '2.1.328', 'set'), line(CODEX, null, 'missing', null, 'set'), line(GEMINI, null, 'missing', null, 'unset'), NO_SANDBOX].join('\n')}\n`,
    );
    const json = await providers(['--json'], { cwd: fresh('cwd'), path: [bin, sysBin], env });
    for (const run of [text, json]) {
      expect(run.code).toBe(0);
      expect(run.stdout + run.stderr).not.toContain(SECRET);
    }
    expect(readFileSync(keyLog, 'utf8')).toBe('nonenonenone');
  });

  test('should print one JSON array with --json', async () => {
    const bin = fresh('bin');
    const gemini = fakeCli(bin, 'gemini', '0.61.0');
    const run = await providers(['--json'], { cwd: fresh('cwd'), path: [bin, sysBin], env: { OPENAI_API_KEY: SECRET } });
    expect(run.code).toBe(0);
    expect(run.stdout.endsWith('\n') && run.stdout.trimEnd().split('\n').length === 1).toBe(true);
    expect(JSON.parse(run.stdout)).toEqual([
      { preset: 'claude-code', package: '@anthropic-ai/claude-code', cli: null, found: 'missing', version: null, pinned: '2.1.328', key: 'unset', key_env: ['ANTHROPIC_API_KEY'] },
      { preset: 'codex', package: '@openai/codex', cli: null, found: 'missing', version: null, pinned: '0.169.0', key: 'set', key_env: ['OPENAI_API_KEY', 'CODEX_API_KEY'] },
      { preset: 'gemini-cli', package: '@google/gemini-cli', cli: gemini, found: 'path', version: '0.61.0', pinned: '0.61.0', key: 'unset', key_env: ['GEMINI_API_KEY'] },
    ]);
  });

  test('should look on PATH, then in ./node_modules/.bin, then in the cache, which counts only when its install was recorded', async () => {
    const cwd = fresh('cwd');
    const bin = fresh('bin');
    const onPath = fakeCli(bin, 'claude', '2.1.300');
    const local = fakeCli(join(cwd, 'node_modules', '.bin'), 'claude', '2.1.301');
    const cacheDir = join(cwd, '.cache', 'laneward');
    const cached = fakeCli(join(cacheDir, 'node_modules', '.bin'), 'claude', '2.1.328');
    const first = async () => (await providers([], { cwd, path: [bin, sysBin] })).stdout.split('\n')[0];
    writeFileSync(join(cacheDir, 'installed.json'), JSON.stringify({ 'claude-code': '2.1.328' }));
    expect(await first()).toBe(line(CLAUDE, onPath, 'path', '2.1.300'));
    rmSync(onPath);
    expect(await first()).toBe(line(CLAUDE, local, 'node_modules', '2.1.301'));
    rmSync(local);
    expect(await first()).toBe(line(CLAUDE, cached, 'cache', '2.1.328'));
    // A bin whose install did not finish (no record, or one for another version) is not found.
    writeFileSync(join(cacheDir, 'installed.json'), JSON.stringify({ 'claude-code': '2.1.327' }));
    expect(await first()).toBe(line(CLAUDE, null, 'missing', null));
    rmSync(join(cacheDir, 'installed.json'));
    expect(await first()).toBe(line(CLAUDE, null, 'missing', null));
  });

  test('should walk PATH as execvp does: skip what cannot run, read an empty entry as the working directory', async () => {
    const cwd = fresh('cwd');
    const notExecutable = fresh('bin');
    writeFileSync(join(notExecutable, 'claude'), '#!/bin/sh\necho 9.9.9\n', { mode: 0o644 });
    const directory = fresh('bin');
    mkdirSync(join(directory, 'claude'));
    const inCwd = fakeCli(cwd, 'claude', '2.1.328');
    const run = await providers([], { cwd, path: [notExecutable, directory, '', sysBin] });
    expect(run.stdout.split('\n')[0]).toBe(line(CLAUDE, inCwd, 'path', '2.1.328'));
  });

  test('should refuse an operand or an unknown option with exit 2', async () => {
    const cwd = fresh('cwd');
    for (const args of [['extra'], ['--frobnicate']]) {
      const run = await providers(args, { cwd, path: [sysBin] });
      expect(run.code).toBe(2);
      expect(run.stdout).toBe('');
      expect(codesOf(run.stderr)).toEqual(['USAGE']);
    }
    const help = await providers(['--help'], { cwd, path: [sysBin] });
    expect(help.code).toBe(0);
    expect(help.stdout.split('\n')[0]).toBe('usage: laneward providers [--install] [--json]');
  });
});

describe('laneward providers: the sandbox line', () => {
  test('should say sandbox=none with the probe failure for a bwrap that fails, and sandbox=bwrap for one that works', async () => {
    const bin = fresh('bin');
    const failing = writeScript(join(bin, 'bwrap'), '#!/bin/sh\necho "bwrap: No permissions to create new namespace" >&2\nexit 1\n');
    const bad = await providers([], { cwd: fresh('cwd'), path: [bin, sysBin] });
    expect([bad.code, bad.stdout.trimEnd().split('\n').at(-1)]).toEqual([0, `SANDBOX: sandbox=none reason=${failing} failed its probe (exit 1: bwrap: No permissions to create new namespace); agents run uncontained`]);
    // The real one (the CI installs bubblewrap), by a link on PATH: its probe runs bwrap --version inside.
    const real = spawnSync('/bin/sh', ['-c', 'command -v bwrap'], { encoding: 'utf8' }).stdout.trim();
    expect(real, 'bubblewrap is installed (apt-get install bubblewrap)').not.toBe('');
    const good = fresh('bin');
    symlinkSync(real, join(good, 'bwrap'));
    const ok = await providers([], { cwd: fresh('cwd'), path: [good, sysBin] });
    expect([ok.code, ok.stdout.trimEnd().split('\n').at(-1)]).toEqual([0, `SANDBOX: sandbox=bwrap program=${join(good, 'bwrap')}`]);
  });
});

describe('laneward providers --install', () => {
  test('should install the missing presets into the cache with one npm run, then find them there', async () => {
    const cwd = fresh('cwd');
    const npmDir = fresh('npm');
    fakeNpm(npmDir);
    const bin = fresh('bin');
    const claude = fakeCli(bin, 'claude', '2.1.328 (Claude Code)');
    const log = join(npmDir, 'argv.log');
    const cacheDir = join(cwd, '.cache', 'laneward');
    const run = await providers(['--install'], { cwd, path: [bin, npmDir, sysBin], env: { FAKE_NPM_LOG: log, OPENAI_API_KEY: SECRET } });
    expect(run.stderr).toBe(`PROVIDERS: installing ${packageSpec(CODEX)} ${packageSpec(GEMINI)} into ${cacheDir}\n`);
    expect(run.code).toBe(0);
    const cached = (pin: (typeof PROVIDER_PINS)[number]) => join(cacheDir, 'node_modules', '.bin', pin.binary);
    expect(run.stdout).toBe(
      `${[line(CLAUDE, claude, 'path', '2.1.328'), line(CODEX, cached(CODEX), 'cache', '0.169.0', 'set'), line(GEMINI, cached(GEMINI), 'cache', '0.61.0'), NO_SANDBOX].join('\n')}\n`,
    );
    expect(npmArgvOf(log)).toEqual([['install', '--no-audit', '--no-fund', '--ignore-scripts', '--save-exact', '--prefix', cacheDir, packageSpec(CODEX), packageSpec(GEMINI)]]);
    expect(JSON.parse(readFileSync(join(cacheDir, 'package.json'), 'utf8'))).toMatchObject({ private: true });
    expect(JSON.parse(readFileSync(join(cacheDir, 'installed.json'), 'utf8'))).toEqual({ codex: '0.169.0', 'gemini-cli': '0.61.0' });

    // Nothing missing: no npm run, no PROVIDERS line.
    const again = await providers(['--install'], { cwd, path: [bin, npmDir, sysBin], env: { FAKE_NPM_LOG: log } });
    expect(again).toMatchObject({ code: 0, stderr: '' });
    expect(npmArgvOf(log)).toHaveLength(1);

    // claude-code's own install.cjs runs (in its package folder) after the scripts npm skipped.
    rmSync(claude);
    const third = await providers(['--install'], { cwd, path: [bin, npmDir, sysBin], env: { FAKE_NPM_LOG: log } });
    expect(third.code).toBe(0);
    expect(npmArgvOf(log)[1]).toEqual(['install', '--no-audit', '--no-fund', '--ignore-scripts', '--save-exact', '--prefix', cacheDir, packageSpec(CLAUDE)]);
    const packageDir = join(cacheDir, 'node_modules', CLAUDE.packageName);
    expect(readFileSync(join(packageDir, 'postinstall-ran'), 'utf8')).toBe(packageDir);
    expect(third.stdout.split('\n')[0]).toBe(line(CLAUDE, cached(CLAUDE), 'cache', '2.1.328'));
  });

  test('should fail with PROVIDER_INSTALL_FAILED (exit 1) when npm fails, is missing, or installs another version', async () => {
    const npmDir = fresh('npm');
    fakeNpm(npmDir);
    const log = join(npmDir, 'argv.log');
    const cases: [string, readonly string[], Record<string, string>, RegExp][] = [
      ['npm exits 7', [npmDir, sysBin], { FAKE_NPM_MODE: 'fail' }, /npm install exited with status 7: npm error 404/],
      ['no npm on PATH', [sysBin], {}, /npm is not found on PATH/],
      ['another version', [npmDir, sysBin], { FAKE_NPM_VERSION: '9.9.9' }, /--version printed 9\.9\.9, not 2\.1\.328/],
    ];
    for (const [what, path, env, message] of cases) {
      const cwd = fresh('cwd');
      const run = await providers(['--install'], { cwd, path, env: { FAKE_NPM_LOG: log, ...env } });
      expect(run.code, what).toBe(1);
      expect(run.stdout, what).toBe('');
      const [announce, error, ...rest] = run.stderr.split('\n');
      expect(announce, what).toBe(`PROVIDERS: installing ${PROVIDER_PINS.map(packageSpec).join(' ')} into ${join(cwd, '.cache', 'laneward')}`);
      expect(rest, what).toEqual(['']);
      expect(codesOf(error!), what).toEqual(['PROVIDER_INSTALL_FAILED']);
      expect(error, what).toMatch(message);
      // Nothing is recorded as installed, so the report still says missing.
      const after = await providers([], { cwd, path: [sysBin] });
      expect(after.stdout.split('\n').slice(0, 3).map((one) => /found=(\w+)/.exec(one)?.[1]), what).toEqual(['missing', 'missing', 'missing']);
    }
  });

  test('should not take an install killed midway for a finished one, and redo it', async () => {
    const cwd = fresh('cwd');
    const npmDir = fresh('npm');
    fakeNpm(npmDir);
    const log = join(npmDir, 'argv.log');
    const killed = await providers(['--install'], { cwd, path: [npmDir, sysBin], env: { FAKE_NPM_LOG: log, FAKE_NPM_MODE: 'kill' } });
    expect(killed.code).toBeNull(); // laneward itself was killed, with every bin already there
    const cacheDir = join(cwd, '.cache', 'laneward');
    expect(existsSync(join(cacheDir, 'node_modules', '.bin', 'claude'))).toBe(true);
    const report = await providers([], { cwd, path: [sysBin] });
    expect(report.stdout.split('\n').slice(0, 3)).toEqual([line(CLAUDE, null, 'missing', null), line(CODEX, null, 'missing', null), line(GEMINI, null, 'missing', null)]);
    // The dead installer's lock is taken over; the install runs again and completes.
    const redo = await providers(['--install'], { cwd, path: [npmDir, sysBin], env: { FAKE_NPM_LOG: log } });
    expect(redo.code).toBe(0);
    expect(npmArgvOf(log)).toHaveLength(2);
    expect(redo.stdout.split('\n').slice(0, 3).map((one) => /found=(\w+) version=(\S+)/.exec(one)?.slice(1))).toEqual([
      ['cache', '2.1.328'],
      ['cache', '0.169.0'],
      ['cache', '0.61.0'],
    ]);
  });

  test('should install once when two processes install into one cache at the same time', async () => {
    const cwd = fresh('cwd');
    const npmDir = fresh('npm');
    fakeNpm(npmDir);
    const log = join(npmDir, 'argv.log');
    const options = { cwd, path: [npmDir, sysBin], env: { FAKE_NPM_LOG: log, FAKE_NPM_SLEEP: '2' } };
    const [a, b] = await Promise.all([providers(['--install'], options), providers(['--install'], options)]);
    expect([a.code, b.code]).toEqual([0, 0]);
    expect(npmArgvOf(log)).toHaveLength(1);
    expect(a.stdout).toBe(b.stdout);
    expect(a.stdout.split('\n').slice(0, 3).map((one) => /found=(\w+)/.exec(one)?.[1])).toEqual(['cache', 'cache', 'cache']);
    // Only the one that ran npm says so; the other found the install done once it had the lock.
    expect([a.stderr, b.stderr].filter((text) => text !== '')).toHaveLength(1);
  });
});

describe('laneward providers: one cache per user', () => {
  test('should install once and find the CLIs there from any directory (HOME/.cache/laneward)', async () => {
    const home = fresh('home');
    const npmDir = fresh('npm');
    fakeNpm(npmDir);
    const log = join(npmDir, 'argv.log');
    const env = { FAKE_NPM_LOG: log, HOME: home };
    const first = await providers(['--install'], { cwd: fresh('cwd'), path: [npmDir, sysBin], env });
    expect(first.code).toBe(0);
    const cacheDir = join(home, '.cache', 'laneward');
    expect(first.stderr).toBe(`PROVIDERS: installing ${PROVIDER_PINS.map(packageSpec).join(' ')} into ${cacheDir}\n`);
    // From another directory: found in the cache, nothing installed again.
    const elsewhere = await providers(['--install'], { cwd: fresh('other'), path: [npmDir, sysBin], env });
    expect(elsewhere).toMatchObject({ code: 0, stderr: '' });
    expect(npmArgvOf(log)).toHaveLength(1);
    expect(elsewhere.stdout.split('\n').slice(0, 3)).toEqual(PROVIDER_PINS.map((pin) => line(pin, join(cacheDir, 'node_modules', '.bin', pin.binary), 'cache', pin.version)));
  });

  test.each([
    ['LANEWARD_CACHE, relative to the working directory', (cwd: string) => ({ env: { LANEWARD_CACHE: 'my-cache', XDG_CACHE_HOME: join(cwd, 'xdg') }, dir: join(cwd, 'my-cache') })],
    ['XDG_CACHE_HOME/laneward', (cwd: string) => ({ env: { XDG_CACHE_HOME: join(cwd, 'xdg') }, dir: join(cwd, 'xdg', 'laneward') })],
    ['HOME/.cache/laneward for a relative XDG_CACHE_HOME', (cwd: string) => ({ env: { XDG_CACHE_HOME: 'xdg' }, dir: join(cwd, '.cache', 'laneward') })],
  ])('should install into %s', async (_what, make) => {
    const cwd = fresh('cwd');
    const npmDir = fresh('npm');
    fakeNpm(npmDir);
    const { env, dir } = make(cwd);
    const run = await providers(['--install'], { cwd, path: [npmDir, sysBin], env: { FAKE_NPM_LOG: join(npmDir, 'argv.log'), ...env } });
    expect(run.code).toBe(0);
    expect(run.stderr).toBe(`PROVIDERS: installing ${PROVIDER_PINS.map(packageSpec).join(' ')} into ${dir}\n`);
    expect(JSON.parse(readFileSync(join(dir, 'installed.json'), 'utf8'))).toEqual(Object.fromEntries(PROVIDER_PINS.map((pin) => [pin.preset, pin.version])));
  });

  test('should take a CLI that answers --version in 5.5 s, over the report\'s 5 s, for installed', async () => {
    const cwd = fresh('cwd');
    const npmDir = fresh('npm');
    fakeNpm(npmDir);
    const log = join(npmDir, 'argv.log');
    // Every other CLI found on PATH; gemini installed, and slow on its first answers.
    const bin = fresh('bin');
    fakeCli(bin, 'claude', '2.1.328');
    fakeCli(bin, 'codex', 'codex-cli 0.169.0');
    const run = await providers(['--install'], { cwd, path: [bin, npmDir, sysBin], env: { FAKE_NPM_LOG: log, FAKE_CLI_SLOW: '5.5' } });
    expect([run.code, run.stderr]).toEqual([0, `PROVIDERS: installing ${packageSpec(GEMINI)} into ${join(cwd, '.cache', 'laneward')}\n`]);
    expect(JSON.parse(readFileSync(join(cwd, '.cache', 'laneward', 'installed.json'), 'utf8'))).toEqual({ 'gemini-cli': '0.61.0' });
  });
});

describe('scripts/real-clis.mjs', () => {
  test('should npm ci a folder whose CLIs are missing, saying so in one line, and leave a complete one alone', () => {
    const dir = fresh('real-clis');
    writeFileSync(join(dir, 'package.json'), readFileSync(join(ROOT, 'test', 'real-clis', 'package.json')));
    const npmDir = fresh('npm');
    const log = join(npmDir, 'argv.log');
    const makes = PROVIDER_PINS.map(
      (pin) => `printf '#!/bin/sh\\necho "%s"\\n' '${pin.version}' > node_modules/.bin/${pin.binary}; chmod +x node_modules/.bin/${pin.binary}`,
    ).join('\n');
    writeScript(
      join(npmDir, 'npm'),
      `#!/bin/sh\n{ for a in "$@"; do printf '%s\\n' "$a"; done; printf -- '--\\n'; } >> '${log}'\nmkdir -p node_modules/.bin node_modules/${CLAUDE.packageName}\n${makes}\nprintf '' > node_modules/${CLAUDE.packageName}/${CLAUDE.postinstall}\n`,
    );
    const script = join(ROOT, 'scripts', 'real-clis.mjs');
    const env = { PATH: [npmDir, sysBin].join(':'), HOME: dir };
    const first = spawnSync(process.execPath, [script, dir], { encoding: 'utf8', env });
    expect(first.status).toBe(0);
    expect(first.stderr).toBe('');
    expect(first.stdout).toMatch(
      new RegExp(`^real-clis: npm ci in ${dir} \\(claude missing, pinned 2\\.1\\.328; codex missing, pinned 0\\.169\\.0; gemini missing, pinned 0\\.61\\.0\\) \\.\\.\\. done in \\d+\\.\\d s\\n$`),
    );
    expect(npmArgvOf(log)).toEqual([['ci', '--no-audit', '--no-fund', '--ignore-scripts']]);
    const second = spawnSync(process.execPath, [script, dir], { encoding: 'utf8', env });
    expect([second.status, second.stdout, second.stderr]).toEqual([0, '', '']);
    expect(npmArgvOf(log)).toHaveLength(1);
  });
});
