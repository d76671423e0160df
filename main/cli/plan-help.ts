/** The help of `laneward plan`, printed for the group and for each of its commands. */
export const PLAN_HELP = `usage: laneward plan <command> --out <run dir> [--state DIR] [--json]

A durable, two-voice review of a plan, driven by a loop of commands:
  next     --out DIR [--plan F] [--ui|--no-ui] [--developer-tool|--no-dx] [--spend-cap USD]
           [--estimate-usd USD] [--redispatch ATTEMPT] [--ceo-only] [--no-carry-forward]
           [--round-cap N] [--carry-check-cap USD]
           start the run (first call needs --plan), reprint open attempts, open the next
           phase, or write the gate after the last phase
  submit   --out DIR --phase P --voice native|outside --attempt ID (--result F | --record F)
           --model ID [--usage-usd USD] [--runner NAME] [--attest WHY]
           | --voice outside --unavailable WHY | --failed WHY
           bind one reviewer result to its attempt, exactly once
  run      --out DIR [--plan F] --native 'CMD {prompt} {result}' --outside '...' --action NAME
           --actions F --trust PUB [--deadline TIME]  drive both voices of every phase
           through the supervisor to the gate (see plan run --help)
  answer   --out DIR --gate-rev N --reply TEXT [--by human|human:NAME|agent:ID] [--owner-reply TEXT |
           --owner-reply-file F | --owner-reply -] [--words-by agent:ID] [--rec-hash H]
           answer the gate: rec | rec except <id><option>... | as-is | <id><option>...
           (--words-by names the --by agent itself; human:NAME is the owner by name; a
           reply that answers nothing new is refused GATE_REV_STALE)
  revise   --out DIR --plan F [--incorporates ID,...] | --settle ID | --withdraw ID
           reopen every phase whose reviewed plan changed (plus eng); the next gate is
           gate_rev + 1; or settle / withdraw one accepted change without an edit
  recommend --out DIR --item ID --option KEY
           change one recommendation before relay (bumps rec_rev; rec needs --rec-hash)
  export   --out DIR     write every artifact and run.json, then validate them
  status   --out DIR     the run as the store holds it (reads only)
  resume   --out DIR [--from CKDIR/RUN]
           report attempts with no result, rewrite derived files, finish an export;
           with --from, first restore the newest valid checkpoint generation into DIR
  checkpoints --from CKDIR/RUN   list checkpoint generations and whether each verifies
  check    --out DIR --attempt ID (--result F --model M [--same-family WHY] | --unavailable WHY)
           bind the carry check of a post-cap plan change (CARRY_CHECK line)
  release  --out DIR --attempt ID   return an open attempt's reservation
  family   MODEL         the model family the conflict check uses

State: --state DIR, else LANEWARD_STATE_ROOT, else the root recorded in DIR/.laneward-run,
else .laneward/state. LANEWARD_SESSION_KIND: interactive|headless|spawned|unattended.
LANEWARD_CHECKPOINT_DIR: publish a checkpoint generation after every change.
Every command but status, checkpoints and family ends with
  GSTACK_RESULT: skill=autoplan status=<status> run=<dir>
Exit status: 0 ok, 1 failure, 2 usage, 3 refused (the code names why).`;
