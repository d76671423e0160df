/**
 * Every task that listens on one long-lived signal (a command's interrupt, a crew's stop)
 * goes through ONE listener on it, which fans out to the tasks linked at that moment. A
 * listener per task piles up with the tasks in flight (Node warns past ten:
 * MaxListenersExceededWarning), and one a task forgot to remove outlives the task.
 */
interface Fanout {
  readonly tasks: Set<() => void>;
  readonly fire: () => void;
}

const fanouts = new WeakMap<AbortSignal, Fanout>();

/**
 * Calls `listener` once when `signal` aborts (at once if it already has). Returns the
 * unlink, to call when the task ends; the last unlink removes the one real listener.
 */
export function onAbort(signal: AbortSignal, listener: () => void): () => void {
  if (signal.aborted) {
    listener();
    return () => undefined;
  }
  let fanout = fanouts.get(signal);
  if (fanout === undefined) {
    const tasks = new Set<() => void>();
    const fire = () => {
      fanouts.delete(signal);
      // A copy: a listener may unlink itself or others while the abort fans out.
      for (const task of [...tasks]) task();
      tasks.clear();
    };
    fanout = { tasks, fire };
    fanouts.set(signal, fanout);
    signal.addEventListener('abort', fire, { once: true });
  }
  // A wrapper per link: the same function linked twice is two links, unlinked one by one.
  const link = () => listener();
  fanout.tasks.add(link);
  const linked = fanout;
  return () => {
    if (!linked.tasks.delete(link) || linked.tasks.size > 0 || fanouts.get(signal) !== linked) return;
    fanouts.delete(signal);
    signal.removeEventListener('abort', linked.fire);
  };
}
