import type { SandboxState } from '../../formats/sandbox/bwrap-argv.ts';
import { oneLine } from '../../formats/text/one-line.ts';

/**
 * The sandbox as the `CREW_SANDBOX:` and `SANDBOX:` lines say it: `sandbox=bwrap
 * program=<path>`, or `sandbox=none|off reason=<why>` (the reason last: it has spaces).
 */
export function sandboxWords(state: SandboxState): string {
  if (state.kind === 'bwrap') return `sandbox=bwrap program=${oneLine(state.program)}`;
  if (state.kind === 'off') return 'sandbox=off reason=the crew file sets "sandbox": "off"; agents run uncontained';
  return `sandbox=none reason=${oneLine(state.reason)}; agents run uncontained`;
}
