import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { git } from '../git/run-git.ts';

/** A repository's refs: full name to object id. */
export type Refs = ReadonlyMap<string, string>;

/** Every ref of the repository at `repo` (HEAD as `HEAD`); empty when git cannot read them. */
export async function refsOf(repo: string): Promise<Refs> {
  const listed = await git(['for-each-ref', '--format=%(refname) %(objectname)'], { cwd: repo });
  const head = await git(['rev-parse', '--verify', '--quiet', 'HEAD'], { cwd: repo });
  const refs = new Map<string, string>();
  if (listed.status === 0) {
    for (const line of listed.stdout.split('\n')) {
      const at = line.lastIndexOf(' ');
      if (at > 0) refs.set(line.slice(0, at), line.slice(at + 1));
    }
  }
  if (head.status === 0) refs.set('HEAD', head.stdout.trim());
  return refs;
}

/** The refs added, removed or moved from `before` to `after`, sorted; those under `skip` left out. */
export function changedRefs(before: Refs, after: Refs, skip: string): string[] {
  const names = new Set([...before.keys(), ...after.keys()]);
  return [...names].filter((name) => !name.startsWith(skip) && before.get(name) !== after.get(name)).sort();
}

/** What a turn's stream is read up to, from its end: a tool result's error is near where it happened, and a stream is capped by stdoutLimit anyway. */
const STREAM_BYTES = 8 * 1024 * 1024;
const READ_ONLY = 'Read-only file system';

/**
 * How many writes the agent's stream reports refused as read-only (EROFS, as the shell,
 * git and the CLIs' own write tools word it in their tool results): per event, the most
 * any one of its strings says, since a CLI may carry one result twice in an event (claude
 * gives a tool's output as the message's content and again as its tool_use_result). The
 * stream is the agent's own file, read without following a link put in its place.
 */
export function readOnlyWrites(stream: string): number {
  let fd: number;
  try {
    fd = openSync(stream, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return 0;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return 0;
    const length = Math.min(stat.size, STREAM_BYTES);
    const bytes = Buffer.alloc(length);
    const got = readSync(fd, bytes, 0, length, stat.size - length);
    return bytes.subarray(0, got).toString('utf8').split('\n').reduce((sum, line) => sum + (line.includes(READ_ONLY) ? eventCount(line) : 0), 0);
  } finally {
    closeSync(fd);
  }
}

/** The most times one string of an event (a JSON line) says READ_ONLY; a line that is not JSON counts as one string. */
function eventCount(line: string): number {
  let event: unknown;
  try {
    event = JSON.parse(line);
  } catch {
    return occurrences(line);
  }
  let most = 0;
  const walk = (value: unknown): void => {
    if (typeof value === 'string') most = Math.max(most, occurrences(value));
    else if (Array.isArray(value)) value.forEach(walk);
    else if (typeof value === 'object' && value !== null) Object.values(value).forEach(walk);
  };
  walk(event);
  return most;
}

const occurrences = (text: string) => text.split(READ_ONLY).length - 1;
