const tails = new Map<string, Promise<unknown>>();

/**
 * Runs `work` after every earlier call with the same key has settled: laneward's own git
 * calls on one worktree never overlap, so a lock found at the start of one is never a
 * sibling call's (see clearStaleLocks). In-process only; the crew's claim keeps other
 * processes out.
 */
export function serialized<T>(key: string, work: () => Promise<T>): Promise<T> {
  const before = tails.get(key) ?? Promise.resolve();
  const run = before.then(work, work);
  const tail = run.then(
    () => undefined,
    () => undefined,
  );
  tails.set(key, tail);
  void tail.then(() => {
    if (tails.get(key) === tail) tails.delete(key);
  });
  return run;
}
