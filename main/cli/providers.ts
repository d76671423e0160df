import { EXIT } from '../../formats/codes/codes.ts';
import { PROVIDER_PINS, type ProviderPin } from '../../formats/providers/pins.ts';
import { oneLine } from '../../formats/text/one-line.ts';
import { installClis } from '../providers/install.ts';
import { CACHE_ENV, cacheDirOf, cliVersion, keyIsSet, locateCli, type FoundWhere } from '../providers/locate.ts';
import { command } from './command.ts';
import { probeBwrap } from '../sandbox/bwrap-probe.ts';
import { sandboxWords } from './sandbox-words.ts';

export const PROVIDERS_HELP = `usage: laneward providers [--install] [--json]

Reports the agent CLIs the provider presets drive, one line per preset:
  PROVIDER: preset=<name> cli=<path|missing> found=<where> version=<v|unknown> pinned=<v> key=set|unset
${PROVIDER_PINS.map((pin) => `  ${pin.preset.padEnd(12)} ${`${pin.packageName}@${pin.version}`.padEnd(34)} program ${pin.binary.padEnd(7)} key ${pin.keyEnv.join(' or ')}`).join('\n')}

A program is looked up on PATH first (found=path), then in ./node_modules/.bin
(found=node_modules), then in the per-user cache (found=cache, only once an install there
finished and was checked): $${CACHE_ENV} if set, else $XDG_CACHE_HOME/laneward, else
~/.cache/laneward, the same from every directory. version is what <program> --version
prints (run for at most 5 s, without the API keys in its environment); unknown when it
prints none. key says whether the key variable is set; its value is never printed.
A last line says whether crews can keep their agents to their worktrees:
  SANDBOX: sandbox=bwrap program=<path>   or   SANDBOX: sandbox=none reason=<why>; agents run uncontained
(bubblewrap on PATH that passed a probe run; see "sandbox" in docs/crews.md).

--install first installs the presets found nowhere into the cache, at their pinned versions
(npm install --ignore-scripts --prefix CACHE; npm must be on PATH), saying so in one
PROVIDERS: line on stderr; each installed CLI must then answer --version with its pinned
version within a minute. Concurrent installs take turns; an interrupted one is redone.
--json prints one JSON array of {preset, package, cli, found, version, pinned, key, key_env}.
Exit status: 0 for the report (a missing CLI or key is reported, not a failure), 1 when
an install failed (PROVIDER_INSTALL_FAILED), 2 usage.`;

interface ProviderReport {
  readonly preset: string;
  readonly package: string;
  readonly cli: string | null;
  readonly found: FoundWhere;
  readonly version: string | null;
  readonly pinned: string;
  readonly key: 'set' | 'unset';
  readonly key_env: readonly string[];
}

export const PROVIDERS = command({
  name: 'providers',
  help: PROVIDERS_HELP,
  options: { install: { type: 'boolean' }, json: { type: 'boolean' } },
  positionals: false,
  run: async ({ values }, io) => {
    const cwd = process.cwd();
    const env = process.env;
    const cacheDir = cacheDirOf(env, cwd);
    if (values.install) {
      const missing = PROVIDER_PINS.filter((pin) => locateCli(pin, { cwd, env, cacheDir }).found === 'missing');
      if (missing.length > 0) await installClis(missing, cacheDir, io, { env });
    }
    const reports = await Promise.all(PROVIDER_PINS.map((pin) => report(pin, cwd, env, cacheDir)));
    if (values.json) io.out(JSON.stringify(reports));
    else {
      for (const one of reports) io.out(reportLine(one));
      io.out(`SANDBOX: ${sandboxWords(probeBwrap(env))}`);
    }
    return EXIT.ok;
  },
});

async function report(pin: ProviderPin, cwd: string, env: NodeJS.ProcessEnv, cacheDir: string): Promise<ProviderReport> {
  const located = locateCli(pin, { cwd, env, cacheDir });
  const version = located.path === null ? null : await cliVersion(located.path, { env, cwd });
  return {
    preset: pin.preset,
    package: pin.packageName,
    cli: located.path,
    found: located.found,
    version,
    pinned: pin.version,
    key: keyIsSet(pin, env) ? 'set' : 'unset',
    key_env: pin.keyEnv,
  };
}

function reportLine(one: ProviderReport): string {
  return `PROVIDER: preset=${one.preset} cli=${one.cli === null ? 'missing' : oneLine(one.cli)} found=${one.found} version=${one.version ?? 'unknown'} pinned=${one.pinned} key=${one.key}`;
}
