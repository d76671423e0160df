import { operatorOf } from '../../formats/crew/control.ts';

/**
 * Why a crew stops before its lanes end: a cancel (a signal, a closed stdout) or its
 * --deadline, as one abort every lane and child hears. `stoppedBy` is the first cause
 * ('deadline', the signal's name, or `operator:<name>` for crew stop), what the report and the store's record say.
 * A runner that must stop for its own reason (a queue's Redis lost) aborts without one.
 */
export class CrewStop {
  private readonly controller = new AbortController();
  private cause: string | null = null;
  private readonly deadline: NodeJS.Timeout | undefined;
  private readonly onCancel = () => {
    this.cause ??= typeof this.cancel.reason === 'string' ? this.cancel.reason : 'SIGTERM';
    this.controller.abort(this.cause);
  };

  constructor(
    private readonly cancel: AbortSignal,
    deadlineMs: number | undefined,
  ) {
    if (cancel.aborted) this.onCancel();
    cancel.addEventListener('abort', this.onCancel, { once: true });
    this.deadline =
      deadlineMs === undefined
        ? undefined
        : setTimeout(() => {
            this.cause ??= 'deadline';
            // Children end as on a SIGTERM: the deadline is the operator's stop, not a failure.
            this.controller.abort('SIGTERM');
          }, deadlineMs);
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get stoppedBy(): string | null {
    return this.cause;
  }

  /**
   * Stops the crew as a SIGTERM does, at an operator's request (crew stop, the console):
   * stoppedBy names them, `operator:<name>`.
   */
  byOperator(by: string): void {
    this.cause ??= operatorOf(by);
    this.controller.abort('SIGTERM');
  }

  /** Stops the lanes for the runner's own reason, which it reports itself (stoppedBy stays). */
  abort(): void {
    this.controller.abort();
  }

  /** The deadline's timer and the cancel's listener go: nothing here keeps the process alive. */
  dispose(): void {
    if (this.deadline !== undefined) clearTimeout(this.deadline);
    this.cancel.removeEventListener('abort', this.onCancel);
  }
}
