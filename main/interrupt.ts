/**
 * Signals that would end laneward without cleanup. While a command supervises children,
 * each becomes an abort (its name the reason) so the children are torn down first.
 * SIGKILL cannot be caught: that limit is documented, not handled.
 */
const FATAL: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR2', 'SIGALRM'];

const closedListeners = new Set<() => void>();

/**
 * Called when stdout or stderr breaks (EPIPE): a supervising command takes it as a
 * cancellation (reason SIGPIPE) and returns true; with none, the caller may simply exit.
 */
export function outputClosed(): boolean {
  for (const listener of closedListeners) listener();
  return closedListeners.size > 0;
}

/** One abort for every way laneward can be told to stop while children run. */
export function interruptSignal(): { signal: AbortSignal; release: () => void } {
  const controller = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => controller.abort(signal);
  const onClosed = () => controller.abort('SIGPIPE');
  const installed: NodeJS.Signals[] = [];
  for (const signal of FATAL) {
    try {
      process.on(signal, onSignal);
      installed.push(signal);
    } catch {
      // A runtime that cannot listen for this signal keeps its default for it.
    }
  }
  closedListeners.add(onClosed);
  return {
    signal: controller.signal,
    release: () => {
      for (const signal of installed) process.off(signal, onSignal);
      closedListeners.delete(onClosed);
    },
  };
}
