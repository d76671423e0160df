/** The help of `laneward lease`, printed for the group and for each of its commands. */
export const LEASE_HELP = `usage: laneward lease run --actions FILE --trust PUB --action NAME --timeout-ms N
                          [--grace-ms N] [--teardown-ms N] [--stdout-limit N]
                          [--stderr-limit N] [--json] -- COMMAND ARGS...

Runs COMMAND (no shell) once, in its own process group and session, as the logical
action NAME of the signed descriptor FILE (FILE.sig, verified with PUB before anything
starts). The action's timeout_mode decides: total_deadline keeps --timeout-ms as a fixed
deadline; admitted_progress_inactivity turns it, once the provider runs, into an
inactivity lease renewed only by admitted progress: a 0x01 byte on fd 3 (progress "fd";
the child gets LANEWARD_PROGRESS_FD=3) or a structured event a tracker admits from
stdout (step-lifecycle, claude-stream-json, codex-json, jsonl-counter). Prose, bytes,
EOF, duplicates and the terminal event never renew. The first mark must come within
timeout - cleanup_reserve_ms. After the provider exits, output draining gets
post_provider_ms once. Any failure tears the tree down: SIGTERM, --grace-ms (500),
SIGKILL, proven gone within --teardown-ms (5000). A descendant that calls setsid leaves
the session and cannot be followed.

Output: the child's stdout and stderr pass through (stdout limit 4 MiB, stderr 256 KiB),
then LEASE: status=... code=... exit=... on stderr. --json prints one outcome object on
stdout ({status, code, exitCode, signal, providerStarted, attempts, marks, durationMs,
cleanupConfirmed, action, timeoutMode, descriptorSha256, ...}, every field present, null
where it does not apply) and sends the child's stdout to stderr.
Exit: the child's own status when it finished by itself; 124 deadline, lease or
post-provider timeout; 3 refused before launch; 126/127 command not executable/found
(126 for any other spawn failure); 130/143/129 cancelled by SIGINT/SIGTERM/SIGHUP
(131/140/142 by SIGQUIT/SIGUSR2/SIGALRM, 141 when laneward's own output breaks);
1 other failures; 2 usage.

laneward lease fleet --count N [--jobs N] [--limit N] <the same options> -- COMMAND ARGS...
runs N copies across the worker pool (each child gets LANEWARD_FLEET_INDEX), at most
--limit at once (default N), the rest started in index order as slots free; a queued
child's budget runs from its slot. Prints one outcome per child as it ends
(--json; then one {"dispatch": {started, finished, marks, ...}} line) and LEASE_FLEET:
children=... at the end.`;
