/** One row of the result-code table: what went wrong and what to do about it. */
export interface CodeInfo {
  readonly summary: string;
  readonly fix: string;
}

/**
 * Every result code laneward prints. The codes are wire format (parents grep them);
 * summaries and fixes are ours. A line is rendered from this table only, so each code
 * has exactly one summary and one fix.
 */
export const RESULT_CODES = {
  ARTIFACT_INVALID_JSON: {
    summary: 'the file is not one JSON document',
    fix: 'rewrite the file from the run state (export again); never hand-edit it',
  },
  ARTIFACT_SCHEMA: {
    summary: 'a field does not match its schema',
    fix: 'write the field with the type and value the schema names (laneward artifact schema <name>)',
  },
  ARTIFACT_UNSUPPORTED_VERSION: {
    summary: 'the schema_version is not one this validator reads',
    fix: 'write the artifact at the version its schema names, or validate with a matching laneward',
  },
  ARTIFACT_RUN_INTERRUPTED: {
    summary: 'the run or one of its voices did not reach a terminal outcome',
    fix: 'resume the run to a terminal status; an interrupted run is never a partial success',
  },
  ARTIFACT_REVIEWER_MISSING: {
    summary: 'a required phase or voice has no recorded outcome or output',
    fix: 'record the voice outcome (completed with its output artifact, or unavailable/failed/skipped)',
  },
  ARTIFACT_PATH_ESCAPE: {
    summary: 'an artifact path leaves the run directory',
    fix: 'list artifacts by a relative path inside the run directory, without .. or symlinks out',
  },
  ARTIFACT_MISSING: {
    summary: 'a file the run lists is absent or cannot be read as a file',
    fix: 'restore the file, or export the run again so run.json lists what exists',
  },
  ARTIFACT_STALE: {
    summary: 'a file no longer matches the sha256 recorded in run.json',
    fix: 'export the run again so run.json records the current bytes; never edit an exported artifact',
  },
  ARTIFACT_MALFORMED_JSONL: {
    summary: 'a JSONL line is not one JSON object',
    fix: 'write exactly one JSON object per line, no blank lines, each under 16 MiB',
  },
  ARTIFACT_DUPLICATE_ID: {
    summary: 'a row id appears more than once in its file',
    fix: 'give every row a unique id within its file',
  },
  ARTIFACT_UNBOUND_ID: {
    summary: 'a row is not bound to the run',
    fix: 'start every row id with "<run>-" and set its run field to the run id of run.json',
  },
  ARTIFACT_COUNT_MISMATCH: {
    summary: 'a count in run.json does not match the rows in the file',
    fix: 'export the run again so counts are computed from the files',
  },
  ARTIFACT_DANGLING_REF: {
    summary: 'a task refers to a finding, decision or task that does not exist',
    fix: 'refer only to ids present in findings.jsonl, decisions.jsonl or tasks.jsonl (or a pr label a task carries)',
  },
  ARTIFACT_DEPENDENCY_CYCLE: {
    summary: 'task dependencies form a cycle',
    fix: 'break the cycle so depends_on describes an order',
  },
  ARTIFACT_GUARD_LINE_MISSING: {
    summary: 'an unattended run has no GUARD_NOT_INSTALLED line in review-record.md',
    fix: 'record the guard line in review-record.md as the session printed it',
  },
  ERRORS_OMITTED: {
    summary: 'more errors than one run prints; the count on the ARTIFACT_INVALID line is exact',
    fix: 'fix the errors shown and validate again (the first 1,000 of each run are printed)',
  },
  ACK_REFUSED: {
    summary: 'an invalid run cannot be acknowledged',
    fix: 'validate the run first (laneward artifact validate) and fix or re-export it',
  },
  ACK_LOCKED: {
    summary: "another ack holds the run's lock and did not release it in time",
    fix: 'retry later; a lock whose process died is taken over at once',
  },
  GATE_REPLY_UNPARSED: {
    summary: 'the gate reply does not parse; nothing was applied',
    fix: 'reply with rec, rec except <tokens>, as-is, or <id><option> tokens such as d3b (bare yes/no is not a reply)',
  },
  GATE_REV_STALE: {
    summary: 'the reply names a gate revision that is not the current one, or one already decided, or answers only items already answered',
    fix: 'render the gate again and answer with the gate_rev it shows, for the items it shows pending',
  },
  GATE_PAGE_OUT_OF_RANGE: {
    summary: 'the gate has no such page',
    fix: 'ask for a page between 1 and the page count the render prints',
  },
  DEADLINE_EXPIRED: {
    summary: 'the deadline passed before the work finished',
    fix: 'report the probe not-run or timed out; never replace the receipt or restart the clock',
  },
  PROBE_BUDGET_EXHAUSTED: {
    summary: 'the receipt allows no more probes',
    fix: 'mark the next probe not-run; the probe count is part of the budget',
  },
  RECEIPT_INVALID: {
    summary: 'the deadline receipt is missing, malformed or unsafe',
    fix: 'start a new guard with laneward deadline start in a fresh, canonical probe directory',
  },
  RECEIPT_EXISTS: {
    summary: 'a receipt already exists at that path and is never replaced',
    fix: 'use the existing receipt (laneward deadline status) or a new probe directory',
  },
  INIT_EXISTS: {
    summary: 'init would write where something already is, and it never replaces anything',
    fix: 'name a new or empty directory with --out, or move the existing crew away first',
  },
  COMMAND_NOT_FOUND: {
    summary: 'the command to run was not found',
    fix: 'name an executable on PATH or by its path',
  },
  COMMAND_NOT_EXECUTABLE: {
    summary: 'the command was found but cannot be executed',
    fix: 'make the file executable, or run it through its interpreter',
  },
  PROBE_LOG_INVALID: {
    summary: 'the probe log beside the receipt cannot prove the probe count; nothing was started',
    fix: 'keep FILE.log a regular file written only by the guard; start a new receipt in a fresh probe directory',
  },
  GUARD_IO: {
    summary: 'the guard has nowhere to write its lines (stderr closed, blocked or broken)',
    fix: 'give the guard a stderr that is open and read; its lines are the evidence of the run',
  },
  DESCRIPTOR_INVALID: {
    summary: 'the action descriptor is unsigned, tampered, malformed or of another version',
    fix: 'sign the descriptor again (laneward actions sign FILE --key KEY) with the key whose public half the crew file\'s actions.trust (or --trust) names, and check it with laneward actions verify FILE --trust PUB',
  },
  ACTION_UNKNOWN: {
    summary: 'the signed action descriptor lists no action of that name; nothing was started',
    fix: 'name one of the actions the message lists (laneward actions verify FILE --trust PUB prints them) where you named it: the crew file\'s actions.reviewer, actions.observer or actions.agent, or --action',
  },
  TRUST_KEY_UNUSABLE: {
    summary: 'the trusted public key cannot be read as an Ed25519 public key; nothing was verified or started',
    fix: 'point the crew file\'s actions.trust (or --trust) at the actions.pub that laneward actions keygen wrote beside the key the descriptor is signed with',
  },
  KEYS_EXIST: {
    summary: 'a key file is already there and is never replaced; nothing was written',
    fix: 'keep using the keys there (sign with --key DIR/actions.key), or pass laneward actions keygen another --out directory',
  },
  PROGRESS_CHANNEL_UNAVAILABLE: {
    summary: 'the progress channel could not be set up before launch; nothing was started',
    fix: 'check the descriptor progress source and the process limits (file descriptors)',
  },
  PROGRESS_CHANNEL_LOST: {
    summary: 'the progress channel closed while the provider kept running',
    fix: 'keep fd 3 open for the provider lifetime; the attempt is over and is not replayed',
  },
  LEASE_EXPIRED: {
    summary: 'no admitted progress arrived within the inactivity lease',
    fix: 'emit structured progress (tool or step lifecycle) more often than the lease, or raise the lease where it is set: the crew file\'s limits.timeout_ms (crew run), --timeout-ms (lease run, plan run, qa start)',
  },
  PROVIDER_NO_START: {
    summary: 'the provider wrote no structured event within first_event_ms of its spawn',
    fix: 'check the CLI starts (its key, its base URL, its network), or raise first_event_ms on its preset runner in the crew file (runners.agent.first_event_ms, likewise .native, .outside, .observer; 60000 by default) or in the signed action; the attempt is not replayed',
  },
  PROVIDER_NO_EXIT: {
    summary: 'the provider wrote its terminal event but did not exit within exit_after_terminal_ms; its tree was torn down and its result kept',
    fix: 'find what keeps the CLI alive after its result (a hook, a background tool, an MCP server), or raise the action\'s exit_after_terminal_ms in the descriptor and sign it again (laneward actions sign)',
  },
  PROVIDER_RATE_LIMITED: {
    summary: 'the provider reported a rate limit or overload (HTTP 429 or 529); the attempt ended and is not replayed',
    fix: 'wait for the retry-after the line names (a crew waits by itself before it starts that provider again), or raise the provider\'s quota',
  },
  QUEUE_UNAVAILABLE: {
    summary: 'the Redis server a --queue names could not be reached, or was lost mid-run; no lane state was lost',
    fix: 'start or reach the Redis server (redis://HOST:PORT), then run the same command again: it resumes',
  },
  JOB_INVALID: {
    summary: 'a queued job was malformed, unsigned, signed by an untrusted key, or named a path outside its place; it was refused and ran nothing',
    fix: 'enqueue jobs only with laneward (crew run --queue, artifact validate --queue) signed by a key the worker trusts (--trust)',
  },
  ARCHIVE_UNREADABLE: {
    summary: 'an artifact worker cannot read a run a job names under its --root (not there, or not readable): its mount is not the batch\'s archive, and it validated nothing',
    fix: 'point the worker\'s --root at where this machine mounts the batch\'s root (the directory the coordinator\'s runs are under), or let it read there',
  },
  LANE_TAKEN: {
    summary: 'another worker holds this lane now (this worker\'s lock on its job expired): this one stopped it and wrote nothing more',
    fix: 'nothing to do for the lane, which runs on; keep workers renewing their locks (a machine stalled longer than --lock loses its lanes)',
  },
  COORDINATOR_SILENT: {
    summary: 'a worker stopped while its lane waited for the crew\'s coordinator to copy the lane\'s records (no child starts before it has): the lane started nothing more there and its job was let go',
    fix: 'run the crew\'s coordinator (the same crew run CREW.json --queue ...) while its workers run: it copies the records, and the lane resumes on a worker',
  },
  RUN_DIR_TOO_LARGE: {
    summary: 'a lane\'s exported run directory is larger than a job may carry back',
    fix: 'keep large outputs out of the run directory, or raise --max-artifact-mb on the worker and the coordinator',
  },
  PROGRESS_INVALID: {
    summary: 'the progress source sent an invalid or non-monotonic mark',
    fix: 'send only 0x01 bytes on fd 3, or a strictly increasing {"progress": n}',
  },
  POST_PROVIDER_TIMEOUT: {
    summary: 'output draining and cleanup after the provider exited overran their budget',
    fix: 'close inherited stdout/stderr in background descendants, or raise the action\'s post_provider_ms in the descriptor and sign it again (laneward actions sign)',
  },
  OUTPUT_LIMIT: {
    summary: 'the provider wrote more output than the limit allows',
    fix: 'write large results to a file and print its path, or raise the limit (lease run --stdout-limit or --stderr-limit)',
  },
  CANCELLED: {
    summary: 'the supervisor was interrupted and stopped the provider',
    fix: 'start a new attempt deliberately; a cancelled attempt is never replayed',
  },
  TEARDOWN_UNPROVEN: {
    summary: 'the provider process group could not be proven gone',
    fix: 'inspect the process group by hand; a descendant may have left it or ignored SIGKILL in a D state',
  },
  SPAWN_FAILED: {
    summary: 'the provider could not be started',
    fix: 'check the command, its permissions and the process limits',
  },
  CHILD_FAILED: {
    summary: 'the provider exited with a failure status',
    fix: 'read the provider output; its exit status is passed through',
  },
  // Review runs (laneward plan). Refusals exit 3, failures 1.
  EXECUTION_UNKNOWN: {
    summary: 'an attempt was dispatched and has no terminal record',
    fix: 'submit its result, or mint a fresh one with plan next --redispatch <attempt> (and plan release --attempt <attempt>)',
  },
  RUN_NOT_INITIALIZED: {
    summary: 'no review run is recorded for this run directory',
    fix: 'start the run with laneward plan next --out <dir> --plan <plan.md>, or pass the --state root it was started with',
  },
  PHASE_NOT_AWAITING: {
    summary: 'the phase is not waiting for this voice',
    fix: 'run laneward plan next --out <dir> and submit only the attempts it prints',
  },
  ATTEMPT_MISMATCH: {
    summary: 'the result does not belong to the open attempt, or the attempt is already bound to other bytes',
    fix: 'submit the result file printed on the attempt\'s ATTEMPT line, once; a bound result cannot be replaced',
  },
  RESULT_RECEIPT_MISSING: {
    summary: 'the result does not start with the INPUT line of this phase and snapshot',
    fix: 'make the first line exactly "INPUT: <phase> <snapshot>" as the prompt says (hand-run records: --attest "<why>")',
  },
  RESULT_FINDINGS_MISSING: {
    summary: 'the result has no readable findings block',
    fix: 'end the review with one gstack-findings fence of JSON lines (an empty fence means no findings)',
  },
  MODEL_FAMILY_CONFLICT: {
    summary: 'both voices of the phase come from one model family',
    fix: 'run the outside voice on a model of another family (laneward plan family <model>)',
  },
  SPEND_CAP_EXCEEDED: {
    summary: 'the attempt would take the run past its spend cap',
    fix: 'raise the cap where it is set (the crew file\'s limits.spend_cap_usd, or plan next --spend-cap), release attempts that will not run (plan release --attempt), or settle spend with plan submit --usage-usd',
  },
  CONSENSUS_MISSING: {
    summary: 'a closed phase the next one builds on has no consensus record',
    fix: 'resume the run (laneward plan resume --out <dir>) so the closed phase records its consensus',
  },
  PLAN_SECTIONS_INVALID: {
    summary: 'the plan lacks a "## Implementation plan" or "## Review record" section',
    fix: 'add both level-two headings to the plan file',
  },
  PLAN_AMEND_PENDING: {
    summary: 'accepted plan changes have not been incorporated yet',
    fix: 'edit the plan and run laneward plan revise --out <dir> --plan <file> --incorporates <ids>',
  },
  PLAN_CHANGED: {
    summary: 'the source plan changed since the run took its snapshot',
    fix: 'revise the run with laneward plan revise --out <dir> --plan <file>, or restore the plan',
  },
  PLAN_SOURCE_CHANGED: {
    summary: 'the source plan changed since the gate was written',
    fix: 'revise the run before answering, or restore the plan the gate was written for',
  },
  ANSWER_BY_REQUIRED: {
    summary: 'an unattended run needs to know who answered',
    fix: 'pass --by human or --by agent:<id>',
  },
  OWNER_REPLY_REQUIRED: {
    summary: 'an agent relaying an answer must record the owner\'s own words',
    fix: 'pass --owner-reply "<words>", --owner-reply-file <path> or --owner-reply - (or --words-by agent:<id>)',
  },
  ANSWER_WORDS_BY_MISMATCH: {
    summary: 'the words an answer is given in are not the answering agent\'s own',
    fix: 'pass --words-by with the same agent:<id> as --by, or relay the owner\'s words with --owner-reply',
  },
  GATE_OWNER_REPLY_MISMATCH: {
    summary: 'the owner\'s words resolve to other choices than the relayed reply',
    fix: 'relay the owner\'s choices exactly, or ask the owner again',
  },
  GATE_REC_STALE: {
    summary: 'the recommendations changed since the render the owner saw',
    fix: 'render the gate again and pass its --rec-hash with the answer',
  },
  CHECKPOINT_OVERLAP: {
    summary: 'the checkpoint directory overlaps the run directory',
    fix: 'point LANEWARD_CHECKPOINT_DIR outside the run directory',
  },
  CHECKPOINT_INVALID: {
    summary: 'no checkpoint generation validates',
    fix: 'restore from another checkpoint directory, or start the run again',
  },
  CEO_ONLY_CONFLICT: {
    summary: '--ceo-only cannot be combined with the other scope options',
    fix: 'drop --ui/--developer-tool/--spend-cap options that name other phases, or drop --ceo-only',
  },
  CEO_ONLY_AFTER_INIT: {
    summary: '--ceo-only only applies to the first next of a run',
    fix: 'start a new run directory with --ceo-only',
  },
  CEO_ONLY_NO_GATE: {
    summary: 'a CEO-only run has no gate to answer',
    fix: 'read the reviewed artifacts; start a full run for a gate',
  },
  DECISION_TRAIL_START_REQUIRED: {
    summary: 'this run has not joined the decision trail',
    fix: 'run laneward trail start <file> <run> first',
  },
  TRAIL_UNREADABLE: {
    summary: 'the decision trail is not a trail file laneward can append to',
    fix: 'pass a regular file written by laneward trail, or a new path; a FIFO, a directory, a foreign file or one over 64 MiB is never written',
  },
  BRIEF_INPUT_MISSING: {
    summary: 'a file the owner brief is built from is absent or cannot be read',
    fix: 'export the run (laneward plan export --out <dir>) before rendering the brief',
  },
  DRAFT_DIRECTION_UNRESOLVED: {
    summary: 'a draft direction line in the plan names no decided decision',
    fix: 'answer the decision the line names (laneward plan answer), or mark the line with the decision label such as (uc1), then run laneward brief close again',
  },
  PLAN_UNREADABLE: {
    summary: 'the plan is not a readable text file',
    fix: 'pass a UTF-8 Markdown plan file (a regular file under 4 MiB)',
  },
  RESULT_UNREADABLE: {
    summary: 'the result file cannot be read as a regular file',
    fix: 'write the result to the printed result= path as a regular file under 16 MiB',
  },
  EXPORT_NOT_READY: {
    summary: 'the run has not reached its gate, so there is nothing final to export',
    fix: 'drive the run with laneward plan next until GSTACK_RESULT says gate_pending',
  },
  PLAN_UNCHANGED: {
    summary: 'the plan to revise to is the plan the run already reviews',
    fix: 'edit the plan\'s implementation section first, or settle a change that needs no edit with --settle <id>',
  },
  DECISION_UNKNOWN: {
    summary: 'no pending plan change or gate item has that id',
    fix: 'name a decision id from the APPLY: lines (or an item id from gate.json)',
  },
  TOOL_DENIED: {
    summary: 'the provider used a tool its tool policy does not allow; the call was ended and its result discarded',
    fix: 'restrict the provider to the tools the policy names (LANEWARD_QA_TOOLS), or run the step in a mode that allows the tool',
  },
  QA_NO_OBSERVER: {
    summary: 'the lane has no observer, so no cross-check can run and completion is refused',
    fix: 'start the lane with laneward qa start --lane ID --observer ... before finishing it',
  },
  QA_NOT_BOOTSTRAPPED: {
    summary: 'the observer has not completed its bootstrap, so no cross-check can run and completion is refused',
    fix: 'bootstrap the observer (laneward qa start, or qa reset) until QA_OBSERVER_READY is printed',
  },
  PREGATE_FAILED: {
    summary: 'a check the crew file names failed at the lane\'s head, and the lane has no agent turn left to fix it',
    fix: 'run the check named in the PREGATE line in the lane\'s worktree, fix the branch, then run the lane again (crew run --retry-failed)',
  },
  QUEUE_RECEIPT_STALE: {
    summary: 'the lane\'s ship receipt names a head that is not its branch\'s tip',
    fix: 'run the lane\'s pregate and receipt again at the branch tip (crew run --retry-failed), or reset the branch to the head the receipt names',
  },
  LAND_CONFLICT: {
    summary: 'the lane\'s branch does not rebase (or merge) cleanly onto the current base tip, so it was not landed',
    fix: 'resolve the conflict on the lane\'s branch in its own worktree (rebase it onto the base named in the LAND line), run its pregate and receipt again (crew run --retry-failed), then crew land again',
  },
  LAND_CHECK_FAILED: {
    summary: 'a pregate check failed on the merged tree (the lane rebased onto the base), so the base did not move',
    fix: 'run the failed check (land/pregate.json in the lane\'s run directory) on the lane rebased onto the base, fix the lane\'s branch, then crew land again',
  },
  RECEIPT_CARRY_PRODUCT_CHANGED: {
    summary: 'rebased onto the base, the lane\'s product diff is not the one its receipt vouched for (its patch id changed), so the receipt cannot be carried',
    fix: 'rebase the lane onto the base in its own worktree, review and pregate the new diff and write a new receipt (crew run --retry-failed), then crew land again',
  },
  LAND_LEASE_REJECTED: {
    summary: 'the remote\'s copy of the lane\'s branch moved after the train read it, so the pinned-lease push was rejected and the lane was not landed',
    fix: 'fetch the remote, read what was pushed to the lane\'s branch, settle it with the lane, then crew land again',
  },
  LAND_PUSH_REJECTED: {
    summary: 'the remote refused the fast-forward push of the base (it moved on by itself), so the train stopped after the lanes it had landed',
    fix: 'fetch the remote and bring the local base up to it (a fast-forward, or settle the divergence by hand), then crew land --push again',
  },
  LAND_CHECKED_OUT: {
    summary: 'the base or a lane\'s branch is checked out in a worktree, whose files a ref moved under it would no longer match',
    fix: 'switch that worktree off the branch (git switch --detach), or remove the lanes\' worktrees (laneward crew clean CREW.json; branches are kept), then crew land again',
  },
  LAND_NOT_READY: {
    summary: 'the lane is not complete with a ship receipt, or a lane it depends on did not land, so it was not landed',
    fix: 'finish the lane (crew run) so that it writes its receipt, or land the lane it depends on first, then crew land again',
  },
  LAND_BASE_UNKNOWN: {
    summary: 'the crew\'s base is not a local branch, so the train has no ref to move',
    fix: 'name the base branch in the crew file ("workspace": {"base": BRANCH}, or "land": {"base": BRANCH})',
  },
  QA_CROSS_CHECK_FAILED: {
    summary: 'the observer\'s cross-check failed; completion is aborted',
    fix: 'act on the guidance in the QA_CROSS_CHECK line, then finish again',
  },
  QA_BOOTSTRAP_FAILED: {
    summary: 'the observer\'s bootstrap did not pass, so the lane is not ready and cadence stays paused',
    fix: 'act on the guidance, then run laneward qa reset --lane ID to bootstrap again',
  },
  QA_VERDICT_MALFORMED: {
    summary: 'the observer did not write a valid verdict file; its call counts as failed',
    fix: 'have the observer write {"verdict":"pass"|"fail","note":"...","guidance":"..."} to the {result} path (guidance required on fail)',
  },
  QA_LANE_ACTIVE: {
    summary: 'the lane is already started and its observer is ready',
    fix: 'use laneward qa reset --lane ID to start it over, or qa stop first',
  },
  QA_LANE_CLOSED: {
    summary: 'the lane is stopped or complete and takes no more turns',
    fix: 'start the lane again with laneward qa start',
  },
  QA_POLICY_UNENFORCEABLE: {
    summary: 'the observer action\'s progress source does not name tools, so its tool policy cannot be enforced',
    fix: 'sign the observer action with progress "claude-stream-json" or "codex-json"',
  },
  STATE_UNAVAILABLE: {
    summary: 'the state root cannot be opened or written',
    fix: 'pass a writable --state directory (or LANEWARD_STATE_ROOT)',
  },
  STATE_RECORD_INVALID: {
    summary: 'a record in the state root is not of a shape or version this laneward reads',
    fix: 'run the laneward that wrote the state root, or start again with an empty --state directory',
  },
  STATE_CORRUPT: {
    summary: 'the state root holds files that are not a laneward LMDB environment, or are truncated',
    fix: 'move the state root aside and restore it from a copy, or start again with an empty --state directory',
  },
  EXPORT_INVALID: {
    summary: 'the exported run directory does not validate',
    fix: 'report it with the validation lines; the run state is kept and export can be run again',
  },
  CREW_INVALID: {
    summary: 'the crew file is not one laneward can run',
    fix: 'name a crew file that exists and is readable, or correct the field the message names (see laneward crew --help for the file format)',
  },
  CREW_BUSY: {
    summary: 'another process is running this crew on this state root, or another crew in its out directory',
    fix: 'wait for it to end (or stop it), or give each crew its own out; a crew started again afterwards resumes every lane',
  },
  CREW_LANE_FAILED: {
    summary: 'at least one lane of the crew ended failed or interrupted',
    fix: 'read the CREW_LANE lines: each names its lane\'s own code and run directory',
  },
  CREW_OWNER_PENDING: {
    summary: 'lanes of the crew wait at their gates for the owner\'s answer (answer: owner); their agents have not started',
    fix: 'answer them with laneward crew answer CREW.json --lane ID|--all --reply REPLY --by NAME, then run the crew again (a running crew goes on by itself)',
  },
  CONSOLE_TOKEN_MISSING: {
    summary: 'a request to change the crew came without the console\'s token',
    fix: 'open the console from the URL the crew printed (CREW_VIEW: ...?token=...); the page sends its token with every action',
  },
  CONSOLE_TOKEN_WRONG: {
    summary: 'a request to change the crew came with a token that is not this console\'s',
    fix: 'open the console from the URL this crew run printed (CREW_VIEW: ...?token=...): each run mints its own token',
  },
  CONSOLE_ORIGIN_REFUSED: {
    summary: 'a request to change the crew came from another origin than the console\'s own page (or named none)',
    fix: 'act from the console\'s own page on 127.0.0.1, or from a shell with laneward crew answer|retry|cancel',
  },
  CONSOLE_BODY_INVALID: {
    summary: 'a console action\'s body is not the JSON object its route takes, or is larger than the bound',
    fix: 'send application/json with the route\'s fields only (lane, lanes, reply, by), under 64 KiB',
  },
  CONSOLE_ACTION_METHOD: {
    summary: 'a console action was asked with another method than POST; nothing changes on GET',
    fix: 'send the action as a POST from the console\'s page',
  },
  CONSOLE_READ_ONLY: {
    summary: 'this console only shows the crew: the process serving it cannot act on the crew',
    fix: 'act from the console of laneward crew run --serve, or from a shell with laneward crew answer|retry|cancel',
  },
  CALL_CANCELLED: {
    summary: 'an operator cancelled the lane\'s running call: its process group was torn down and the call is never replayed',
    fix: 'run the lane again with laneward crew retry CREW.json --lane ID (new attempts, from where its saved progress says)',
  },
  LANE_CANCELLED: {
    summary: 'an operator cancelled the lane: it stopped where it was, its running call torn down',
    fix: 'run the lane again with laneward crew retry CREW.json --lane ID if it is still wanted',
  },
  CREW_NOT_RUNNING: {
    summary: 'no process runs the crew on this state root, so there is nothing to stop or cancel',
    fix: 'start the crew with laneward crew run CREW.json (the same --state); a lane that is not running needs no cancel',
  },
  LANE_UNKNOWN: {
    summary: 'the crew file names no such lane',
    fix: 'name a lane the crew file lists (laneward crew status CREW.json shows them)',
  },
  LANE_NOT_RETRYABLE: {
    summary: 'the lane cannot be retried as it is: it is complete, running, not started, or waiting for its owner',
    fix: 'retry a failed or interrupted lane; answer a waiting one with laneward crew answer; a running one can be cancelled first (crew cancel)',
  },
  CALL_NOT_RUNNING: {
    summary: 'the lane has no supervised call running to cancel',
    fix: 'read the lane with laneward crew status CREW.json --lane ID; cancel the lane itself with crew cancel without --call',
  },
  LANE_NOT_RUNNING: {
    summary: 'the lane has ended (complete or failed), so there is nothing to cancel',
    fix: 'nothing to do; retry a failed lane with laneward crew retry CREW.json --lane ID',
  },
  CREW_CONTROL_UNSUPPORTED: {
    summary: 'the crew runs on queue workers, which take only a stop, not lane requests',
    fix: 'stop the crew with laneward crew stop CREW.json, then run it again; lanes are retried with crew run --retry-failed',
  },
  CONTROL_PENDING: {
    summary: 'the crew did not take the request within --wait; it stays recorded',
    fix: 'check that the crew runs (laneward crew status CREW.json); a running crew takes the request within a second, and the next crew run takes a retry',
  },
  ATTEMPT_IN_FLIGHT: {
    summary: 'another plan run that still runs dispatched this attempt',
    fix: 'let the other plan run (or crew) finish; drive one run from one process at a time',
  },
  RUN_BUSY: {
    summary: 'another plan run that still runs drives this review run',
    fix: 'wait for it to end (or stop it); a plan run started afterwards resumes the run where it stopped',
  },
  PLAN_RUN_STOPPED: {
    summary: 'the review run cannot move on by itself (its native voice failed)',
    fix: 'read the run with plan status, redispatch the failed attempt (plan next --redispatch), then run it again',
  },
  WORKSPACE_FAILED: {
    summary: 'a git command on a lane\'s worktree failed: creating, reading, committing or removing it',
    fix: 'read the git message the line carries, fix the repository (permissions, a branch checked out elsewhere, a full disk), then run the crew again: the worktree and branch are found and reused',
  },
  SANDBOX_UNAVAILABLE: {
    summary: 'the crew file requires the agent sandbox ("sandbox": "required") and bubblewrap is missing or failed its probe',
    fix: 'install bubblewrap (apt-get install bubblewrap) and check that `laneward providers` prints SANDBOX: sandbox=bwrap, or set "sandbox": "auto" to run uncontained where it cannot be had',
  },
  WORKSPACE_DIRTY: {
    summary: 'a lane worktree has uncommitted changes or is locked, so it was kept',
    fix: 'commit or copy the changes out of the worktree the line names, or pass --force to remove it with them; its branch is kept either way',
  },
  WORKSPACE_TOO_LARGE: {
    summary: "an agent turn adds a file over the crew's limits.max_file_bytes (or more than limits.max_turn_bytes in all), so nothing of it was committed",
    fix: "remove or shrink the file the line names in the lane's worktree (or raise the limit in the crew file), then run the lane again with --retry-failed",
  },
  AGENT_RESULT_INVALID: {
    summary: 'the lane agent did not write a turn result laneward can read',
    fix: 'have the agent write {"text": ..., "diff": bool, "finish": bool} as JSON to its {result} path',
  },
  AGENT_TURNS_EXHAUSTED: {
    summary: 'the lane agent used every turn the crew allows without reporting finish',
    fix: 'raise limits.agent_turns in the crew file, or have the agent report finish',
  },
  PROVIDER_INSTALL_FAILED: {
    summary: 'the pinned agent CLIs could not be installed into the cache',
    fix: 'check that npm is on PATH and the registry is reachable, then run laneward providers --install again (a half-done install is redone)',
  },
  USAGE: {
    summary: 'the command line is not one laneward accepts',
    fix: 'use only the options and arguments {command} --help lists',
  },
  IO_ERROR: {
    summary: 'a file could not be read or written',
    fix: 'check the path, its permissions and the free space',
  },
  INTERNAL: {
    summary: 'laneward failed unexpectedly',
    fix: 'report the message with the command that produced it',
  },
} as const satisfies Record<string, CodeInfo>;

export type ResultCode = keyof typeof RESULT_CODES;

/** Exit statuses shared by every command. */
export const EXIT = { ok: 0, fail: 1, usage: 2, refused: 3 } as const;
