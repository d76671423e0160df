import type { Consensus } from '../consensus/types.ts';
import type { ReviewFinding } from '../review/finding.ts';
import type { GateItem } from '../schemas/gate.ts';

/** A bound finding with its run-bound id, as the gate builder and export read it. */
export interface RunFinding extends ReviewFinding {
  readonly id: string;
  readonly phase: string;
  readonly voice: 'native' | 'outside';
}

export interface GateDraft {
  readonly items: GateItem[];
  /** Finding ids each item stands for. */
  readonly findings: Record<string, string[]>;
}

const SEVERE = new Set(['Critical', 'High']);
const RANK: Record<string, number> = { Critical: 0, High: 1, Medium: 2, Low: 3, Informational: 4 };

/**
 * The final gate of one review round: user challenges as approval items (`uc<n>`), each
 * disagreement and each open Critical or High finding as an auto item (`d<n>`; a twin
 * pair the consensus confirmed is one item), then `p1`, plan approval. Auto items
 * recommend `a` (apply the fix to the plan) and keep `b` (carry it into the build as a
 * blocking task); challenges keep `a` (the plan's direction) and recommend it too unless
 * both voices raised the same change with the same remedy. Urgent findings are outside
 * the plan: they go to the URGENT block, not the gate.
 */
export function draftGate(phases: readonly { consensus: Consensus; findings: readonly RunFinding[] }[]): GateDraft {
  const items: GateItem[] = [];
  const findings: Record<string, string[]> = {};
  let d = 0;
  let uc = 0;
  let changesPlan = false;
  for (const { consensus, findings: rows } of phases) {
    const byId = new Map(rows.map((row) => [row.id, row]));
    const twinOf = new Map<string, string>();
    const disagree = new Set<string>();
    for (const entry of consensus.entries) {
      if (entry.native === null || (entry.verdict !== 'confirmed' && entry.verdict !== 'disagree')) continue;
      twinOf.set(entry.outside, entry.native);
      twinOf.set(entry.native, entry.outside);
      if (entry.verdict === 'disagree') disagree.add(entry.outside);
    }
    const done = new Set<string>();
    for (const row of rows) {
      if (done.has(row.id) || row.urgent === true) continue;
      const twin = twinOf.has(row.id) ? byId.get(twinOf.get(row.id)!) : undefined;
      const pair = twin === undefined ? [row] : [row, twin];
      if (row.user_challenge === true || twin?.user_challenge === true) {
        const label = `uc${++uc}`;
        const shared = twin !== undefined && row.user_challenge === true && twin.user_challenge === true &&
          row.changes === twin.changes && row.fix !== undefined && row.fix === twin.fix;
        const remedies = pair.filter((f) => f.user_challenge === true).map((f) => `${f.voice}: ${f.fix ?? 'no remedy given'}`);
        items.push({
          id: label,
          title: `${row.title} (challenges the plan's ${row.changes ?? twin?.changes ?? 'direction'})`,
          kind: 'approval',
          phase: row.phase,
          options: [
            { key: 'a', text: "keep the plan's direction" },
            { key: 'b', text: `change the plan as challenged: ${remedies.join('; ')}` },
          ],
          recommended: shared ? 'b' : 'a',
          keep: 'a',
        });
        if (shared) changesPlan = true;
        record(findings, label, pair, done);
        continue;
      }
      const severe = pair.some((f) => SEVERE.has(f.severity));
      const disputed = disagree.has(row.id) || (twin !== undefined && disagree.has(twin.id));
      if (!severe && !disputed) continue;
      const label = `d${++d}`;
      const worst = pair.reduce((a, b) => (RANK[a.severity]! <= RANK[b.severity]! ? a : b));
      const title = disputed
        ? `${row.title} (severity disputed: ${pair.map((f) => `${f.voice} ${f.severity}`).join(' vs ')})`
        : `${worst.severity}: ${row.title}`;
      const fix = pair.map((f) => f.fix).find((text) => text !== undefined);
      items.push({
        id: label,
        title,
        kind: 'auto',
        phase: row.phase,
        options: [
          { key: 'a', text: fix === undefined ? 'apply the fix to the plan' : `apply the fix to the plan: ${fix}` },
          { key: 'b', text: 'carry it into the build as a blocking task' },
        ],
        recommended: 'a',
        keep: 'b',
      });
      changesPlan = true;
      record(findings, label, pair, done);
    }
  }
  items.push({
    id: 'p1',
    title: 'Approve the plan',
    kind: 'approval',
    options: [
      { key: 'a', text: 'approve the plan as it stands (only changes picked in this reply apply)' },
      { key: 'b', text: 'approve with the recommended changes' },
      { key: 'c', text: 'hold: revise the plan before approving' },
      { key: 'd', text: 'rerun every phase on the current plan' },
      { key: 'e', text: 'stop: end the run incomplete' },
    ],
    recommended: changesPlan ? 'b' : 'a',
    keep: 'a',
  });
  return { items, findings };
}

function record(findings: Record<string, string[]>, label: string, pair: readonly RunFinding[], done: Set<string>): void {
  findings[label] = pair.map((f) => f.id);
  for (const f of pair) done.add(f.id);
}
