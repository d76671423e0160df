/**
 * The facts a plan command reports besides its attempts, binds, closes and gate: each one
 * thing that happened or holds, as ids, codes, counts, hashes and paths. main/cli/plan-lines.ts
 * words each as one printed line, in the order the report lists them.
 *
 * Free text appears only where the record itself keeps it (`why`: a reason the journal
 * holds; `title`, `words`: the owner's or an item's own words; `detail`: an error's message;
 * `note`: the SESSION_KIND line the settings make when they read an unknown kind).
 */
export type ReportFact =
  | { readonly fact: 'session_kind_unknown'; readonly note: string }
  | { readonly fact: 'estimate'; readonly durable: boolean; readonly phases: readonly { readonly phase: string; readonly seconds: number | null }[]; readonly history: number }
  | { readonly fact: 'plan_changed'; readonly since: 'review' | 'answer'; readonly source: string; readonly sha256: string; readonly reviewed: string }
  | { readonly fact: 'run_status'; readonly run: string; readonly status: string; readonly stateRoot: string; readonly gateRev: number; readonly sessionKind: string }
  | { readonly fact: 'phase_status'; readonly phase: string; readonly state: string; readonly native: string; readonly outside: string }
  | { readonly fact: 'voice_failed'; readonly attempt: string; readonly phase: string; readonly voice: string; readonly status: string; readonly code: string }
  | { readonly fact: 'restored'; readonly run: string; readonly generation: string; readonly from: string }
  | { readonly fact: 'scope'; readonly ui: boolean; readonly uiWhy: string; readonly dx: boolean; readonly dxWhy: string; readonly source: string }
  | { readonly fact: 'scope_pin'; readonly pin: string; readonly plan: string }
  | { readonly fact: 'carry_check_started'; readonly attempt: string; readonly prompt: string; readonly result: string; readonly families: readonly string[] }
  | { readonly fact: 'carry_check_verdict'; readonly attempt: string; readonly verdict: string; readonly findings: number; readonly severe: number; readonly sha256: string }
  | { readonly fact: 'carry_refused'; readonly why: string }
  | { readonly fact: 'carried_under_do_it'; readonly decision: string; readonly title: string; readonly chosen: string }
  | { readonly fact: 'carried'; readonly gateRev: number; readonly fromRev: number; readonly words: string; readonly by: string | null }
  | { readonly fact: 'voice'; readonly attempt: string; readonly phase: string; readonly voice: string; readonly status: string; readonly code: string | null }
  | { readonly fact: 'reviewed'; readonly run: string; readonly phase: string; readonly confirmed: number; readonly new: number; readonly native_only: number }
  | { readonly fact: 'cycle'; readonly run: string; readonly wallS: number; readonly phases: readonly { readonly phase: string; readonly seconds: number }[] }
  | { readonly fact: 'amendment'; readonly verb: 'settled' | 'withdrawn'; readonly decision: string; readonly pending: number }
  | { readonly fact: 'revised'; readonly run: string; readonly planRev: number; readonly reopened: readonly string[]; readonly capped: boolean; readonly incorporated: readonly string[]; readonly pending: number }
  | { readonly fact: 'recommend'; readonly decision: string; readonly from: string; readonly to: string; readonly recRev: number; readonly recHash: string }
  | { readonly fact: 'released'; readonly attempt: string; readonly phase: string; readonly voice: string; readonly freedUsd: number }
  | { readonly fact: 'exported'; readonly run: string; readonly files: number; readonly runJson: string }
  | { readonly fact: 'artifact_valid'; readonly run: string; readonly status: string | null; readonly attested: number }
  | { readonly fact: 'checkpoint'; readonly generation: string; readonly seq: number; readonly dir: string | null }
  | { readonly fact: 'checkpoint_failed'; readonly detail: string }
  | { readonly fact: 'trail_failed'; readonly detail: string };
