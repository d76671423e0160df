// What the crew page's gate inbox shows of one lane waiting for its owner, read on request
// (`/lanes/<id>/gate.json`): its owner brief, its findings and its recommendation. Every
// text comes from the lane's run directory and is escaped where it is rendered.

/** One gate item as the inbox lists it: the option recommended, by key and text. */
export interface InboxItem {
  readonly id: string;
  readonly title: string;
  readonly kind: string;
  readonly recommended: string;
  readonly recommendedText: string;
}

export interface InboxFinding {
  readonly id: string;
  readonly severity: string;
  readonly title: string;
}

/** A waiting lane's gate, as the inbox shows it. */
export interface LaneGate {
  readonly lane: string;
  /** The gate revision the brief was written for (null: no gate.json could be read). */
  readonly gateRev: number | null;
  /** <run>/brief.md (the `brief render` page), cut at its bound; null when absent or unreadable. */
  readonly brief: string | null;
  readonly briefTruncated: boolean;
  /** The recommendation as a reply would spell it item by item (`d1a d2b p1a`); null without a gate. */
  readonly recommendation: string | null;
  readonly items: readonly InboxItem[];
  /** The first findings, in the file's order, and how many there are in all. */
  readonly findings: readonly InboxFinding[];
  readonly findingsCount: number;
}

/** Findings listed per lane at most; the rest are counted. */
export const INBOX_FINDINGS = 50;

/** The inbox's view of a gate.json value and findings.jsonl rows (each unknown: read from a run a child wrote). */
export function laneGateOf(lane: string, brief: { text: string; truncated: boolean } | null, gate: unknown, findingRows: readonly unknown[]): LaneGate {
  const str = (value: unknown) => (typeof value === 'string' ? value : '');
  const record = (value: unknown): Record<string, unknown> => (typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {});
  const g = record(gate);
  const rawItems = Array.isArray(g['items']) ? g['items'] : [];
  const items: InboxItem[] = rawItems.map((raw) => {
    const item = record(raw);
    const options = Array.isArray(item['options']) ? item['options'].map(record) : [];
    const recommended = str(item['recommended']);
    return { id: str(item['id']), title: str(item['title']), kind: str(item['kind']), recommended, recommendedText: str(options.find((o) => o['key'] === recommended)?.['text']) };
  });
  const findings = findingRows.map(record).map((f) => ({ id: str(f['id']), severity: str(f['severity']), title: str(f['title']) }));
  const gateRev = typeof g['gate_rev'] === 'number' && Number.isInteger(g['gate_rev']) ? g['gate_rev'] : null;
  return {
    lane,
    gateRev,
    brief: brief?.text ?? null,
    briefTruncated: brief?.truncated ?? false,
    recommendation: items.length === 0 ? null : items.map((item) => `${item.id}${item.recommended}`).join(' '),
    items,
    findings: findings.slice(0, INBOX_FINDINGS),
    findingsCount: findings.length,
  };
}
