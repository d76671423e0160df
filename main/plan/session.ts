import { oneLine } from '../../formats/issue.ts';
import type { SessionKind } from '../../formats/review-run.ts';

const KINDS: readonly SessionKind[] = ['interactive', 'headless', 'spawned', 'unattended'];

/** LANEWARD_SESSION_KIND; an unknown value runs as interactive and says so. */
export function sessionKind(env: NodeJS.ProcessEnv): { kind: SessionKind; note: string | null } {
  const raw = env['LANEWARD_SESSION_KIND'];
  if (raw === undefined || raw === '') return { kind: 'interactive', note: null };
  if ((KINDS as readonly string[]).includes(raw)) return { kind: raw as SessionKind, note: null };
  // Escaped where it is read: the value is printed, and a line break in it would forge a line.
  return { kind: 'interactive', note: `SESSION_KIND: interactive (unknown kind '${oneLine(raw)}')` };
}
