import { availableParallelism } from 'node:os';
import { exitStatus } from '../../formats/codes/exit-status.ts';
import { isLanewardError } from '../../formats/codes/error.ts';
import { interruptSignal } from '../interrupt.ts';
import { intOption, minutesOption, usage } from './args.ts';
import { command } from './command.ts';
import { crewWorkerPrinter } from './crew-worker-lines.ts';

export const CREW_WORKER_HELP = `usage: laneward crew worker --queue redis://HOST:PORT --trust PUB [--state DIR]
                            [--concurrency N] [--threads N] [--lock TIME] [--max-artifact-mb N]

Takes lanes that laneward crew run CREW.json --queue ... --key KEY enqueued, up to
--concurrency at once (default 2), and runs each exactly as a local crew runs a lane, on
this machine's own state root, supervision threads (--threads, default its cores) and
QA thread, which the worker keeps for every lane it runs; each lane's saved changes go
back as the job's progress, its exported run directory as the job's result (at most
--max-artifact-mb, default 16: more is RUN_DIR_TOO_LARGE). A job is run only if its
signature verifies with --trust (the public half of the coordinator's --key; the lane's
signed actions are checked with it too); anything else is refused JOB_INVALID and runs
nothing. A lane whose lock is not renewed for --lock (default 30s) is taken for lost:
the next worker that takes it ends it EXECUTION_UNKNOWN (what the lost worker started may
have run; it is never started again) unless its own state root holds the lane, which it
then resumes. A job is run only while its coordinator's signed ledger entry names it:
a copy of one runs nothing (JOB_INVALID). No child of a lane starts before the crew's
coordinator has copied the lane's records into its own store (it resumes the lane from
that copy if Redis loses its data); until it has, the lane waits. SIGTERM or SIGINT: no
new lane; the running ones finish; exit 0 (a Redis that does not answer for 5 s
meanwhile: the lanes are stopped, exit 1 QUEUE_UNAVAILABLE; a lane still waiting for its
coordinator 5 s after the signal: stopped, its job let go, COORDINATOR_SILENT).

Lines: CREW_WORKER: queue=<url> worker=<pid@host> ... on stderr at start, then on stdout
CREW_WORKER: job=<id> lane=<id> status=<stage> [code=<CODE>] per lane, or
CREW_WORKER: job=<id> status=refused code=<CODE>, or CREW_WORKER: job=<id>
status=released code=LANE_TAKEN (its job lost its holder; the lane waits for it) or
code=COORDINATOR_SILENT (stopped while it waited for its coordinator; the next worker
takes it up from its stream). On stderr, CREW_WORKER: job=<id> lane=<id>
waiting=coordinator once a lane has waited 5 s for its coordinator's copy.
Exit status: 0 stopped by a signal after its lanes ended, 1 Redis unreachable
(QUEUE_UNAVAILABLE) or a state root that cannot be opened, 2 a bad command line (USAGE).`;

export const crewWorkerCommand = command({
  name: 'worker',
  help: CREW_WORKER_HELP,
  positionals: false,
  options: {
    queue: { type: 'string' },
    trust: { type: 'string' },
    state: { type: 'string' },
    concurrency: { type: 'string' },
    threads: { type: 'string' },
    lock: { type: 'string' },
    'max-artifact-mb': { type: 'string' },
  },
  run: async ({ values }, io) => {
    if (values.queue === undefined) throw usage('crew worker needs --queue redis://HOST:PORT');
    if (values.trust === undefined) throw usage('crew worker needs --trust PUB: the key its jobs must be signed by');
    const lockMs = minutesOption('lock', values.lock) ?? 30_000;
    if (lockMs < 1_000) throw usage('--lock must be at least 1s');
    const { crewWorker } = await import('../queue/crew-worker.ts');
    const interrupt = interruptSignal();
    try {
      await crewWorker(
        {
          queue: values.queue,
          trust: values.trust,
          state: values.state,
          cwd: process.cwd(),
          env: process.env,
          concurrency: intOption('concurrency', values.concurrency, 1, 256) ?? 2,
          threads: intOption('threads', values.threads, 1, 256) ?? Math.max(1, availableParallelism()),
          lockMs,
          maxArtifactBytes: (intOption('max-artifact-mb', values['max-artifact-mb'], 1, 1024) ?? 16) * 1024 * 1024,
          cancel: interrupt.signal,
        },
        crewWorkerPrinter(io),
      );
    } catch (error) {
      // Stopped while Redis did not answer: its lanes ended (their children with them) and
      // the line is printed; a BullMQ client that gave up may still hold the event loop, so
      // the process ends regardless once the line had time to go out.
      if (interrupt.signal.aborted && isLanewardError(error) && error.code === 'QUEUE_UNAVAILABLE') setTimeout(() => process.exit(exitStatus('QUEUE_UNAVAILABLE')), 2_000).unref();
      throw error;
    } finally {
      interrupt.release();
    }
    return exitStatus(null);
  },
});
