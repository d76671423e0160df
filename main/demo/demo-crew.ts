import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeKeyPair, readPrivateKey } from '../actions/keys.ts';
import { signatureFileOf, signatureText } from '../actions/signature.ts';
import { makeDirs } from '../fs/make-dirs.ts';

/** Failing variants a demo crew may mix in, one lane each, in this order. */
export const BROKEN_KINDS = ['reviewer-stall', 'reviewer-crash', 'reviewer-malformed', 'agent-crash', 'observer-fail'] as const;

export interface DemoCrewOptions {
  readonly dir: string;
  readonly crew: string;
  readonly lanes: number;
  /** Lanes given a failing fixture, cycling through BROKEN_KINDS. */
  readonly broken: number;
  readonly concurrency: number;
  /** Where the fixtures live (the repository's fixtures/). */
  readonly fixtures?: string;
  /** `instant`: healthy lanes run the shell fixtures of fixtures/instant (no runtime to start; benches). */
  readonly instant?: boolean;
}

/** The repository's fixtures directory, beside dist/ where the bundle runs from. */
export function defaultFixtures(): string {
  return fileURLToPath(new URL('../fixtures', import.meta.url));
}

const plan = (n: number) => `# Plan: lane ${n}

## Implementation plan

1. Read the input of lane ${n} with a streaming reader.
2. Check every record against its schema.
3. Write the results in batches of ${100 + n}.

## Review record

Nothing yet.
`;

/**
 * Writes a ready-to-run crew into `dir`: a signing key, the three actions signed (each an
 * admitted-progress lease: fd 3 marks, or the observer's tool events), one plan per lane and crew.json naming the
 * fixture reviewers, observer and agent. Returns the crew file's path.
 */
export function writeDemoCrew(options: DemoCrewOptions): string {
  const fixtures = options.fixtures ?? defaultFixtures();
  makeDirs(join(options.dir, 'plans'));
  const lease = (progress: string) => ({ timeout_mode: 'admitted_progress_inactivity', progress, cleanup_reserve_ms: 100, post_provider_ms: 2_000 });
  // The observer's events name its tools, so its tool policy can be enforced.
  writeSignedActions(options.dir, { review: lease('fd'), observe: lease('claude-stream-json'), agent: lease('fd') });
  const node = process.execPath;
  const reviewer = (variant: string) => [node, join(fixtures, 'reviewers', 'reviewer.mjs'), '--variant', variant, '--steps', '2', '--delay-ms', '5', '{prompt}', '{result}'];
  const observer = (verdict: string) => [node, join(fixtures, 'observers', `${verdict}.mjs`), '{prompt}', '{result}', '--delay-ms', '2'];
  const agent = (mode: string) => [node, join(fixtures, 'agents', 'agent.mjs'), '{prompt}', '{result}', mode, '3'];
  const instant = (kind: string) => [join(fixtures, 'instant', `${kind}.sh`), '{prompt}', '{result}'];
  const width = String(options.lanes).length;
  const lanes = Array.from({ length: options.lanes }, (_, i) => {
    const id = `lane-${String(i + 1).padStart(width, '0')}`;
    writeFileSync(join(options.dir, 'plans', `${id}.md`), plan(i + 1));
    // The broken lanes are spread evenly, so each shows up while the healthy ones run.
    const stride = options.broken === 0 ? 0 : Math.floor(options.lanes / options.broken);
    const brokenAt = stride === 0 || (i + 1) % stride !== 0 ? -1 : (i + 1) / stride - 1;
    const kind = brokenAt >= 0 && brokenAt < options.broken ? BROKEN_KINDS[brokenAt % BROKEN_KINDS.length] : undefined;
    const runners =
      kind === 'reviewer-stall' ? { outside: reviewer('stall') }
      : kind === 'reviewer-crash' ? { native: reviewer('crash') }
      : kind === 'reviewer-malformed' ? { outside: reviewer('malformed') }
      : kind === 'agent-crash' ? { agent: agent('crash') }
      : kind === 'observer-fail' ? { observer: observer('fail') }
      : undefined;
    return { id, plan: `plans/${id}.md`, ...(runners === undefined ? {} : { runners }) };
  });
  const crew = {
    schema_version: 1,
    crew: options.crew,
    out: 'runs',
    actions: { file: 'actions.json', trust: 'keys/actions.pub', reviewer: 'review', observer: 'observe', agent: 'agent' },
    models: { native: 'claude-fixture', outside: 'gpt-fixture' },
    runners:
      options.instant === true
        ? { native: instant('reviewer'), outside: instant('reviewer'), observer: instant('observer'), agent: instant('agent') }
        : { native: reviewer('healthy'), outside: reviewer('healthy'), observer: observer('pass'), agent: agent('healthy') },
    answer: 'as-is',
    limits: { concurrency: options.concurrency, agent_turns: 6, timeout_ms: 5_000 },
    lanes,
  };
  const file = join(options.dir, 'crew.json');
  writeFileSync(file, `${JSON.stringify(crew, null, 2)}\n`);
  return file;
}

/** Which lanes a demo crew broke on purpose (their ids), for checking the result. */
export function brokenLanes(file: string): string[] {
  const crew = JSON.parse(readFileSync(file, 'utf8')) as { lanes: { id: string; runners?: unknown }[] };
  return crew.lanes.filter((l) => l.runners !== undefined).map((l) => l.id);
}

/** A demo's key pair (`keys/`) and its three actions, `actions.json`, signed with it. */
export function writeSignedActions(dir: string, actions: Readonly<Record<'review' | 'observe' | 'agent', object>>): void {
  const keys = writeKeyPair(join(dir, 'keys'));
  const text = `${JSON.stringify({ schema_version: 1, actions }, null, 2)}\n`;
  const file = join(dir, 'actions.json');
  writeFileSync(file, text);
  writeFileSync(signatureFileOf(file), signatureText(Buffer.from(text), readPrivateKey(keys.key)));
}
