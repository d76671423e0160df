import { closeSync, existsSync } from 'node:fs';
import type { SupervisionSpec } from './spec.ts';
import { openStreamSink, StreamFollower } from './stream-file.ts';

/**
 * A supervision's output files (`stdoutFile`, `stderrFile`): the descriptors a launch
 * hands the provider (sinks), held only until it holds its own, and the followers that
 * read what it writes there, from the files' start.
 */
export class OutputFiles {
  private sinkFds: number[] = [];
  private readonly followers: StreamFollower[] = [];

  constructor(private readonly spec: SupervisionSpec) {}

  /** The sinks' descriptors, for the child's stdio (empty without files). */
  get sinks(): readonly number[] {
    return this.sinkFds;
  }

  /** Whether a file is followed: its output is whole only once no writer is left. */
  get followed(): boolean {
    return this.followers.length > 0;
  }

  /** Creates (or truncates) the files for a launch; throws what the open threw. */
  openSinks(): void {
    const { spec } = this;
    if (spec.stdoutFile === undefined || spec.adopt !== undefined) return;
    this.sinkFds.push(openStreamSink(spec.stdoutFile));
    if (spec.stderrFile !== undefined) this.sinkFds.push(openStreamSink(spec.stderrFile));
  }

  closeSinks(): void {
    for (const fd of this.sinkFds) closeSync(fd);
    this.sinkFds = [];
  }

  /** Follows the files (a stderr file only when it exists); throws when one cannot be opened. */
  follow(onStdout: (chunk: Buffer) => void, onStderr: (chunk: Buffer) => void): void {
    const { spec } = this;
    if (spec.stdoutFile === undefined) return;
    this.followers.push(new StreamFollower(spec.stdoutFile, onStdout));
    if (spec.stderrFile !== undefined && existsSync(spec.stderrFile)) this.followers.push(new StreamFollower(spec.stderrFile, onStderr));
  }

  /** Reads every followed file to its end (no writer is left). */
  drain(): void {
    for (const follower of this.followers) follower.drain();
  }

  stop(): void {
    for (const follower of this.followers) follower.stop();
  }
}
