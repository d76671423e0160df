import type { StdioOptions } from 'node:child_process';
import type { Readable } from 'node:stream';
import type { OutcomeCode } from './outcome.ts';
import type { SupervisionSpec } from './spec.ts';

/**
 * The child's stdio: stdin the prompt file's descriptor when given, else closed (piped) or
 * inherited; stdout and stderr the output files' descriptors when given (`sinks`), else piped or inherited.
 */
export function stdioFor(stdio: SupervisionSpec['stdio'], fd: boolean, stdin: number | undefined, sinks: readonly number[]): StdioOptions {
  const out = stdio === 'inherit' ? 'inherit' : 'pipe';
  const input = stdin ?? (stdio === 'inherit' ? 'inherit' : 'ignore');
  const stdout = sinks[0] ?? out;
  // A stdout file without a stderr file: stderr still comes through a pipe.
  const stderr = sinks[1] ?? out;
  return fd ? [input, stdout, stderr, 'pipe'] : [input, stdout, stderr];
}

/** The code of a spawn that failed with `errno` (`fd`: the action asked for a progress pipe). */
export function launchFailureCode(errno: string, fd: boolean): OutcomeCode {
  if (fd && (errno === 'EMFILE' || errno === 'ENFILE')) return 'PROGRESS_CHANNEL_UNAVAILABLE';
  if (errno === 'ENOENT') return 'COMMAND_NOT_FOUND';
  if (errno === 'EACCES' || errno === 'ENOEXEC' || errno === 'EISDIR') return 'COMMAND_NOT_EXECUTABLE';
  return 'SPAWN_FAILED';
}

/** Settles when the stream has ended or closed (at once if it already has). */
export function streamEnd(stream: Readable): Promise<void> {
  return new Promise((resolve) => {
    if (stream.readableEnded || stream.destroyed) return resolve();
    stream.once('close', () => resolve());
    stream.once('end', () => resolve());
  });
}
