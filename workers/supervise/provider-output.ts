import { JsonlLineSplitter } from '../../formats/jsonl/lines.ts';
import type { ProviderFacts, StreamReader } from '../../formats/providers/facts.ts';
import { progressFor } from '../../formats/providers/presets.ts';
import { streamEvent } from '../../formats/providers/stream-base.ts';
import { createStreamReader } from '../../formats/providers/stream-reader.ts';
import type { SupervisionHooks, SupervisionSpec } from './spec.ts';
import { ToolGuard } from './tool-guard.ts';
import { StderrTail } from './stderr-tail.ts';
import { createTracker, type ProgressTracker } from './trackers/tracker.ts';

/** What the provider's output tells its supervision, as it is read. */
export interface OutputEvents {
  /** The output broke a rule: a limit, the tool policy, the tracker's grammar. */
  readonly fail: (code: 'OUTPUT_LIMIT' | 'TOOL_DENIED' | 'PROGRESS_INVALID') => void;
  /** An admitted mark from the tracker. */
  readonly mark: () => void;
  /** Whether a first structured event is still awaited (PROVIDER_NO_START's timer runs). */
  readonly awaitingStart: () => boolean;
  /** The first structured event. */
  readonly started: () => void;
  /** The provider's terminal event (from its stream reader or its tracker). */
  readonly terminal: () => void;
}

/**
 * The provider's stdout and stderr as a supervision reads them, from pipes or followed
 * files alike: byte limits, the JSONL lines of stdout fed to the progress tracker, the
 * tool guard and the stream reader (the provider's facts), and the hooks' copies.
 */
export class ProviderOutput {
  /** The first tool the policy denied, for the outcome. */
  deniedTool: string | null = null;
  private readonly tracker: ProgressTracker | undefined;
  private readonly guard: ToolGuard | undefined;
  private readonly reader: StreamReader | undefined;
  private splitter: JsonlLineSplitter | undefined;
  private stdoutBytes = 0;
  private stderrBytes = 0;
  /** The end of its stderr, for the call's record: a failure carries what the child said. */
  private readonly tail = new StderrTail();
  // Whether stdout is split into lines at all: only when something reads them.
  private readonly reads: boolean;

  constructor(
    private readonly spec: SupervisionSpec,
    private readonly hooks: SupervisionHooks,
    private readonly events: OutputEvents,
  ) {
    const source = progressFor(spec.progress, spec.provider);
    this.tracker = source !== null && source !== 'fd' ? createTracker(source) : undefined;
    this.guard = spec.toolPolicy === undefined ? undefined : new ToolGuard(spec.toolPolicy);
    this.reader = spec.provider === undefined ? undefined : createStreamReader(spec.provider);
    this.reads = this.tracker !== undefined || this.guard !== undefined || this.reader !== undefined || spec.firstEventMs !== undefined;
  }

  /** The tracker's admitted marks so far (0 without a tracker). */
  get marks(): number {
    return this.tracker?.marks ?? 0;
  }

  /** The last lines of its stderr, bounded and escaped (empty when it wrote none). */
  stderrTail(): readonly string[] {
    return this.tail.lines();
  }

  /** What the provider's stream said, or null for a call that runs no preset. */
  facts(): ProviderFacts | null {
    return this.reader?.facts() ?? null;
  }

  stdout(chunk: Buffer): void {
    this.stdoutBytes += chunk.length;
    if (this.stdoutBytes > this.spec.stdoutLimit) return this.events.fail('OUTPUT_LIMIT');
    if (this.reads) (this.splitter ??= new JsonlLineSplitter((line) => this.feed(line))).push(chunk);
    this.hooks.onStdout?.(chunk);
  }

  stderr(chunk: Buffer): void {
    this.stderrBytes += chunk.length;
    this.tail.push(chunk);
    if (this.stderrBytes > this.spec.stderrLimit) return this.events.fail('OUTPUT_LIMIT');
    this.hooks.onStderr?.(chunk);
  }

  /** The output is whole: a last line without its newline is read too. */
  end(): void {
    this.splitter?.end();
  }

  private feed(line: string | null): void {
    if (line === null) return;
    const events = this.events;
    if (events.awaitingStart() && streamEvent(line) !== undefined) events.started();
    if (this.reader !== undefined) {
      this.reader.feed(line);
      if (this.reader.finished) events.terminal();
    }
    // The policy is checked first: a denied tool's line admits no mark.
    const denied = this.guard?.check(line);
    if (denied !== undefined) {
      this.deniedTool ??= denied;
      return events.fail('TOOL_DENIED');
    }
    if (this.tracker === undefined) return;
    const verdict = this.tracker.feed(line);
    if (verdict.kind === 'mark') events.mark();
    else if (verdict.kind === 'invalid') events.fail('PROGRESS_INVALID');
    else if (verdict.kind === 'terminal') events.terminal();
  }
}
