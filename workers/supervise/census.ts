import { errnoCode } from '../../formats/codes/error.ts';
import { canRun, readProcStat, statScratch, type ProcStat } from './proc-stat.ts';
import { lastPid, type ProcSnapshot, type ProcSnapshots } from './proc-snapshot.ts';
import { environHas } from './find-by-env.ts';

/** At most this many pids handed out since a snapshot began are probed one by one. */
const NEWCOMER_PROBE_MAX = 128;

/**
 * The processes of one supervised tree: the leader's process group and its session (a
 * descendant that moves to a group of its own stays in the session), and the sessions of
 * descendants that called setsid, found by their parent while it was a member (agent
 * CLIs start every tool command in a session of its own). One census per supervision; it
 * reads the shared, immutable snapshots and keeps its leader's identity and the sessions
 * it followed.
 *
 * A process is identified by pid and start time. A member must have started no earlier
 * than the leader; and once the leader's pid names a process with another start time,
 * the number was reused, which the kernel allows only after the old session emptied.
 */
export class TreeCensus {
  readonly leader: number;
  private readonly snapshots: ProcSnapshots;
  /** The leader's start time as read when the census began; undefined when it was already gone. */
  readonly leaderStart: number | undefined;
  private readonly scratch = statScratch();
  /**
   * Listings of members this census read as dead (a zombie with no running thread). A
   * later snapshot that lists the same entry carried it over, which it does only while
   * the kernel has not handed that pid out again: the same process, still dead.
   */
  private readonly dead = new WeakSet<ProcStat>();
  /**
   * Sessions a member's child founded by setsid, by their founder's pid, with the
   * founder's start time: a session id is not handed out again while a process is in it,
   * and a founder pid that names a process started at another time says it was.
   */
  private readonly escaped = new Map<number, number>();
  /**
   * A variable only this tree's processes carry (the supervisor put it in the leader's
   * environment; descendants inherit it), or undefined. It finds a descendant whose parent
   * link is gone before the census saw it: a CLI that starts a hook in a session of its
   * own and exits (on the teardown's SIGTERM, say) leaves it to init at once.
   */
  private readonly tag: Buffer | undefined;
  /** Processes whose environment was read and found untagged (pid to start time): not read again. */
  private readonly tagRead = new Map<number, number>();
  /** The last look by tag met a candidate whose environment could not be read yet. */
  private unsure = false;

  constructor(leader: number, snapshots: ProcSnapshots, tag?: Buffer) {
    this.leader = leader;
    this.snapshots = snapshots;
    this.tag = tag;
    this.leaderStart = readProcStat(leader, this.scratch)?.startTime;
    snapshots.warm();
  }

  /**
   * Members that can still run, by `snapshot` (this turn's unless given): every process
   * the snapshot puts in the leader's session or group, each re-read now (a snapshot may
   * carry an old state), and kept only while it is the same process (start time) and ours.
   * `exceptLeader` leaves the leader out (and unread).
   */
  liveMembers(snapshot: ProcSnapshot = this.snapshots.current(), exceptLeader = false): ProcStat[] {
    if (!snapshot.readable) return this.groupAnswers() ? [{ pid: this.leader, state: 'R', pgid: this.leader, sid: this.leader, threads: 1, startTime: 0 }] : [];
    if (this.reused(snapshot)) return [];
    this.follow(snapshot);
    const live: ProcStat[] = [];
    const seen = new Set<number>();
    const lists = [snapshot.bySession.get(this.leader), snapshot.byGroup.get(this.leader), ...[...this.escaped.keys()].map((sid) => snapshot.bySession.get(sid))];
    for (const list of lists) {
      for (const listed of list ?? []) {
        if (seen.has(listed.pid) || (exceptLeader && listed.pid === this.leader)) continue;
        seen.add(listed.pid);
        // Hint: a listing already read as dead is not read again (see `dead`); in a storm
        // of teardowns this saves a /proc read per member per proof and poll.
        if (this.dead.has(listed)) continue;
        const now = readProcStat(listed.pid, this.scratch);
        if (now === undefined || now.startTime !== listed.startTime || !this.isOurs(now)) continue;
        if (canRun(now)) live.push(now);
        else this.dead.add(listed);
      }
    }
    return live;
  }

  /**
   * Signals the tree: the leader's group at once (no /proc read stands before the first
   * signal), then every live member outside the group, each read just before its signal
   * (liveMembers) so a pid that changed hands since the snapshot is never signalled.
   * True when anything was signalled.
   */
  signal(signal: NodeJS.Signals): boolean {
    let sent = signalGroup(this.leader, signal);
    // The leader is not read: it leads its session, so it can never leave its group.
    for (const member of this.liveMembers(this.snapshots.current(), true)) {
      if (member.pgid === this.leader) continue; // the group signal reached it
      try {
        process.kill(member.pid, signal);
        sent = true;
      } catch {
        // Gone since we looked.
      }
    }
    return sent;
  }

  /**
   * Whether the tree is gone, proven: no live member now, and none among the processes
   * created since the listing began (a child forked just before its parent died is missed
   * by a listing taken before the fork): the pids handed out since, read one by one, or
   * when there are many, a listing taken in a later turn. Zombies do not count, unless a
   * thread of theirs runs.
   */
  async gone(): Promise<boolean> {
    const snapshot = this.snapshots.current();
    // A process whose tag could not be read yet (mid-exec) may be ours: not proven, look again.
    if (this.liveMembers(snapshot).length > 0 || this.unsure) return false;
    // A process of the tree that the snapshot missed was created after its listing began,
    // so its pid is one the kernel handed out since; when those are few they are read
    // now, and the proof needs no later listing (in a storm, the next turn comes late).
    const newcomer = snapshot.readable && snapshot.lastPid !== undefined ? this.newcomerRuns(snapshot.lastPid) : undefined;
    if (newcomer !== undefined) return !newcomer;
    const later = await this.snapshots.next();
    if (!later.readable) return !this.groupAnswers();
    return this.liveMembers(later).length === 0 && !this.unsure;
  }

  /**
   * Whether a process of the tree with a pid handed out after `from` can run; undefined
   * when that cannot be told by a few reads (the last pid unreadable, wrapped around, or
   * too many pids handed out since).
   */
  private newcomerRuns(from: number): boolean | undefined {
    const to = lastPid(this.scratch);
    if (to === undefined || to < from || to - from > NEWCOMER_PROBE_MAX) return undefined;
    for (let pid = from + 1; pid <= to; pid++) {
      const stat = readProcStat(pid, this.scratch);
      if (stat === undefined || !canRun(stat)) continue;
      // One whose tag cannot be read yet counts: a proof never rests on a read that failed.
      if (this.isOurs(stat) || this.tagged(stat) !== false) return true;
    }
    return false;
  }

  private isOurs(stat: ProcStat): boolean {
    const founded = this.escaped.get(stat.sid);
    if (stat.sid !== this.leader && stat.pgid !== this.leader && founded === undefined) return false;
    return (this.leaderStart === undefined || stat.startTime >= this.leaderStart) && (founded === undefined || stat.startTime >= founded);
  }

  /**
   * Follows members' children that left for a session of their own: the parent link is
   * the only trace, and it holds only while the parent lives, so a supervision of a CLI
   * that does this calls it while the CLI runs too ({@link track}). Sessions whose founder
   * pid now names another process are dropped.
   */
  private follow(snapshot: ProcSnapshot, byTag = true): void {
    if (!snapshot.readable || this.reused(snapshot)) return;
    for (const [sid, start] of this.escaped) {
      const founder = snapshot.byPid.get(sid);
      if (founder !== undefined && founder.startTime !== start) this.escaped.delete(sid);
    }
    const queue: number[] = [];
    for (const list of [snapshot.bySession.get(this.leader), snapshot.byGroup.get(this.leader), ...[...this.escaped.keys()].map((sid) => snapshot.bySession.get(sid))]) {
      for (const member of list ?? []) if (this.isOurs(member)) queue.push(member.pid);
    }
    const visited = new Set<number>(queue);
    while (queue.length > 0) {
      for (const listed of snapshot.byParent.get(queue.pop()!) ?? []) {
        if (visited.has(listed.pid) || (this.leaderStart !== undefined && listed.startTime < this.leaderStart)) continue;
        visited.add(listed.pid);
        // Read afresh: a listing carried over from an earlier snapshot keeps the session the
        // process had then, and setsid moves it to its own without a new pid.
        const child = this.fresh(listed);
        if (child === undefined) continue;
        if (!this.isOurs(child) && child.sid === child.pid) this.escaped.set(child.sid, child.startTime);
        queue.push(child.pid);
      }
    }
    if (byTag && this.tag !== undefined) this.followTag(snapshot);
  }

  /**
   * Follows the sessions of processes that carry the tree's tag and are not members: only
   * those not in their parent's session are read (a child in its parent's session is found
   * through that parent, or is not ours), each once, and only those started since the
   * leader. Their session counts from its founder's start when the founder is listed, else
   * from the leader's (every process of a session descends from its founder, which this
   * tree started).
   */
  private followTag(snapshot: ProcSnapshot): void {
    this.unsure = false;
    for (const listed of snapshot.byPid.values()) {
      if (this.leaderStart !== undefined && listed.startTime < this.leaderStart) continue;
      if (this.tagRead.get(listed.pid) === listed.startTime) continue;
      // A listing that says ours may be one carried over from before a setsid: read afresh.
      const stat = this.isOurs(listed) ? this.fresh(listed) : listed;
      if (stat === undefined || this.isOurs(stat)) continue;
      const parent = stat.ppid === undefined ? undefined : snapshot.byPid.get(stat.ppid);
      if (parent !== undefined && parent.sid === stat.sid) continue;
      if (this.tagged(stat, snapshot) === undefined && canRun(stat)) this.unsure = true;
    }
  }

  /** `listed` as it is now, or undefined once its pid names no process or another one. */
  private fresh(listed: ProcStat): ProcStat | undefined {
    const now = readProcStat(listed.pid, this.scratch);
    return now !== undefined && now.startTime === listed.startTime ? now : undefined;
  }

  /**
   * Whether `stat`, not a member, carries the tree's tag; undefined when its environment
   * cannot be read yet (mid-exec), to be read again. A process found untagged is not read
   * again. A tagged one's session is followed from then on, counted from its founder's
   * start when the founder is found (in `snapshot`, else read now; it started before its
   * session's members), else from the leader's.
   */
  private tagged(stat: ProcStat, snapshot?: ProcSnapshot): boolean | undefined {
    if (this.tag === undefined || (this.leaderStart !== undefined && stat.startTime < this.leaderStart)) return false;
    if (this.tagRead.get(stat.pid) === stat.startTime) return false;
    const has = environHas(stat.pid, this.tag);
    if (has === false) this.tagRead.set(stat.pid, stat.startTime);
    if (has !== true) return has;
    const founder = snapshot?.byPid.get(stat.sid) ?? readProcStat(stat.sid, this.scratch);
    const since = this.leaderStart ?? stat.startTime;
    this.escaped.set(stat.sid, founder !== undefined && founder.startTime <= stat.startTime && founder.startTime >= since ? founder.startTime : since);
    return true;
  }

  /**
   * Looks for members' children that left the session, while the tree runs. (Not by tag:
   * a tagged process is found whenever members are counted, and counting is what a
   * teardown and a proof do; every 200 ms it would only cost a pass over the listing.)
   */
  track(): void {
    this.follow(this.snapshots.current(), false);
  }

  /** The leader's pid now names another process: our session ended before it was reused. */
  private reused(snapshot: ProcSnapshot): boolean {
    if (this.leaderStart === undefined) return false;
    for (const list of [snapshot.bySession.get(this.leader), snapshot.byGroup.get(this.leader)]) {
      for (const stat of list ?? []) if (stat.pid === this.leader) return stat.startTime !== this.leaderStart;
    }
    return false;
  }

  /** Without /proc the best answer is whether the group accepts signals (zombies do too). */
  private groupAnswers(): boolean {
    try {
      process.kill(-this.leader, 0);
      return true;
    } catch {
      return false;
    }
  }
}

function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (error) {
    if (errnoCode(error) === 'ESRCH') return false;
    throw error;
  }
}
