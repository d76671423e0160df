import { resolve } from 'node:path';
import { readPublicKey } from '../actions/keys.ts';
import { defaultThreads } from '../pool.ts';
import { queueTarget } from '../queue/connection.ts';
import { intOption, usage } from './args.ts';
import { command } from './command.ts';

export const WORKER_HELP = `usage: laneward artifact worker --queue redis://HOST:PORT --trust PUB [--root DIR] [--concurrency N] [--jobs N] [--json]

Validates the runs of the batches laneward artifact validate --queue puts on that Redis,
until SIGTERM or SIGINT: then it takes no more jobs, finishes the ones it is running and
exits 0. Start one or more on every machine that can read the archive.

A job is opened only when the key whose public half is PUB (laneward actions keygen)
signed it, and only when every run path it names is relative and stays inside its root;
anything else fails with JOB_INVALID before any run is read. Each run is validated as
laneward artifact validate does, and the reports go back to the coordinator, which
prints them.

Prints ARTIFACT_WORKER: queue=<url> root=<DIR|job> concurrency=<n> jobs=<n> on stderr
once it takes jobs, then per job on stdout ARTIFACT_WORKER: job=<id> runs=<n> invalid=<n>,
or ARTIFACT_WORKER: job=<id> failed=<CODE> with its error line on stderr (--json: one
{job, runs, invalid} or {job, failed, message} object each), and ARTIFACT_WORKER: stopped
(<SIGNAL>) on stderr when it stops. A Redis that cannot be reached, or is lost, is
QUEUE_UNAVAILABLE (exit 1).

options:
  --queue URL         the Redis to take jobs from: redis://[[user]:password@]HOST:PORT[/DB]
  --trust FILE        the Ed25519 public key (PEM) jobs must be signed with
  --root DIR          where the batch's root (the deepest directory holding the coordinator's
                      inputs) is on this machine (default: the coordinator's path, as each job names it)
  --concurrency N     jobs validated at once (default 1)
  --jobs N            validation threads (default: the machine's parallelism)
  --json              print one JSON object per job instead of a line`;

export const WORKER = command({
  name: 'worker',
  help: WORKER_HELP,
  options: {
    queue: { type: 'string' },
    trust: { type: 'string' },
    root: { type: 'string' },
    concurrency: { type: 'string' },
    jobs: { type: 'string' },
    json: { type: 'boolean' },
  },
  positionals: false,
  run: async ({ values }, io) => {
    if (values.queue === undefined) throw usage('expected --queue redis://HOST:PORT, the Redis to take jobs from');
    const target = queueTarget(values.queue);
    if (values.trust === undefined) throw usage('expected --trust PUB, the public key jobs must be signed with');
    if (values.root === '') throw usage('--root is empty (an unset variable?); name the directory the archive is in');
    const concurrency = intOption('concurrency', values.concurrency, 1, 256) ?? 1;
    const threads = intOption('jobs', values.jobs, 1, 256) ?? defaultThreads();
    const trust = readPublicKey(values.trust);
    // The queue client and the pool, and everything they load, are needed only here.
    const [{ serveRunsWorker }, { workerPrinter }] = await Promise.all([import('../queue/runs-worker.ts'), import('./worker-lines.ts')]);
    return serveRunsWorker({ target, trust, root: values.root === undefined ? undefined : resolve(values.root), concurrency, threads }, workerPrinter(io, values.json === true));
  },
});
