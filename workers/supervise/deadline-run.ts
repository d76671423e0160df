import { errnoCode } from '../../formats/error.ts';
import { DeadlineTimer, nowMs } from './monotonic-timer.ts';
import { signalExitCode, signalTree, spawnGroup } from './process-group.ts';

export interface DeadlineRunSpec {
  readonly argv: readonly string[];
  /** Time left on the receipt when the guard launches, in ms. */
  readonly remainingMs: number;
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
  /** Called once the child is running (its pid is its process group). */
  readonly onStarted?: (pid: number) => void;
}

export type DeadlineRunOutcome =
  | { readonly kind: 'exited'; readonly exitCode: number; readonly signal: string | null; readonly durationMs: number }
  | { readonly kind: 'timedOut'; readonly exitCode: 124; readonly signal: string | null; readonly durationMs: number; readonly killLateMs: number }
  | { readonly kind: 'cancelled'; readonly exitCode: number; readonly signal: string | null; readonly durationMs: number }
  | { readonly kind: 'spawnFailed'; readonly exitCode: 126 | 127; readonly errno: string };

/**
 * Runs one probe under the guard: its own process group, argv without a shell, the
 * group SIGKILLed at once at the deadline (the guard's contract: no grace) and again
 * whenever the probe finishes, so background descendants never outlive it. `cancel`
 * (the guard itself interrupted) kills the group too.
 */
export function runUnderDeadline(spec: DeadlineRunSpec, cancel?: AbortSignal): Promise<DeadlineRunOutcome> {
  return new Promise((resolve) => {
    const started = nowMs();
    let child: ReturnType<typeof spawnGroup>;
    try {
      child = spawnGroup({ argv: spec.argv, stdio: 'inherit', ...pick(spec) });
    } catch (error) {
      const errno = errnoCode(error) ?? 'UNKNOWN';
      resolve({ kind: 'spawnFailed', exitCode: errno === 'ENOENT' ? 127 : 126, errno });
      return;
    }
    let timedOut = false;
    let killLateMs = 0;
    let cancelledBy: NodeJS.Signals | undefined;
    let timer: DeadlineTimer | undefined;

    const onCancel = () => {
      cancelledBy = (cancel?.reason as NodeJS.Signals | undefined) ?? 'SIGTERM';
      if (child.pid !== undefined) signalTree(child.pid, 'SIGKILL');
    };
    child.once('error', (error) => {
      timer?.clear();
      cancel?.removeEventListener('abort', onCancel);
      // 'error' before 'spawn' means nothing ran: the command could not be executed.
      const errno = errnoCode(error) ?? 'UNKNOWN';
      resolve({ kind: 'spawnFailed', exitCode: errno === 'ENOENT' ? 127 : 126, errno });
    });
    child.once('spawn', () => {
      const pid = child.pid!;
      spec.onStarted?.(pid);
      timer = new DeadlineTimer(started + spec.remainingMs, (late) => {
        timedOut = true;
        killLateMs = late;
        signalTree(pid, 'SIGKILL');
      });
      if (cancel?.aborted) onCancel();
      else cancel?.addEventListener('abort', onCancel, { once: true });
    });
    child.once('exit', (code, signal) => {
      timer?.clear();
      cancel?.removeEventListener('abort', onCancel);
      // The probe is done: nothing it left in its group may keep running.
      signalTree(child.pid!, 'SIGKILL');
      const durationMs = nowMs() - started;
      if (cancelledBy !== undefined) {
        resolve({ kind: 'cancelled', exitCode: signalExitCode(cancelledBy), signal, durationMs });
      } else if (timedOut) {
        resolve({ kind: 'timedOut', exitCode: 124, signal, durationMs, killLateMs });
      } else {
        resolve({ kind: 'exited', exitCode: code ?? signalExitCode(signal ?? 'SIGKILL'), signal, durationMs });
      }
    });
  });
}

function pick(spec: DeadlineRunSpec): { env?: NodeJS.ProcessEnv; cwd?: string } {
  return { ...(spec.env === undefined ? {} : { env: spec.env }), ...(spec.cwd === undefined ? {} : { cwd: spec.cwd }) };
}
