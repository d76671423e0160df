// TEMP STUB (lead): replaced by the helper's implementation at merge.
import type { SEVERITIES } from './schemas/findings.ts';
export type Severity = (typeof SEVERITIES)[number];
export type Changes = 'scope' | 'cost' | 'direction';
export interface ReviewFinding {
  readonly ref: string | null; readonly severity: Severity; readonly title: string; readonly file?: string; readonly line?: number; readonly fix?: string;
  readonly user_challenge?: true; readonly changes?: Changes; readonly urgent?: true; readonly suggested_owner?: string;
}
export type ResultShape = 'fence' | 'table' | 'list' | 'none';
export interface ParseResultOptions { readonly phase: string; readonly snapshot: string; readonly record: boolean; readonly attested: boolean }
export type ParsedResult =
  | { ok: true; receipt: 'input' | 'attested'; shape: ResultShape; findings: ReviewFinding[] }
  | { ok: false; code: 'RESULT_RECEIPT_MISSING' | 'RESULT_FINDINGS_MISSING'; message: string; line: number | null };
export function parseReviewResult(bytes: Uint8Array, options: ParseResultOptions): ParsedResult {
  const text = new TextDecoder().decode(bytes);
  const lines = text.split('\n');
  const hasInput = lines[0]?.trim() === `INPUT: ${options.phase} ${options.snapshot}`;
  if (!hasInput && !(options.record && options.attested && !lines[0]?.startsWith('INPUT:'))) return { ok: false, code: 'RESULT_RECEIPT_MISSING', message: 'no INPUT line', line: 1 };
  const start = lines.findIndex((l) => l.trim() === '```gstack-findings');
  if (start < 0) return { ok: false, code: 'RESULT_FINDINGS_MISSING', message: 'no fence', line: null };
  const findings: ReviewFinding[] = [];
  for (let i = start + 1; i < lines.length && lines[i]!.trim() !== '```'; i++) {
    if (lines[i]!.trim() === '') continue;
    const row = JSON.parse(lines[i]!) as { id?: string; severity: Severity; title: string; file?: string; line?: number; user_challenge?: true; changes?: Changes; urgent?: true; suggested_owner?: string };
    findings.push({ ...row, ref: row.id ?? null });
  }
  return { ok: true, receipt: hasInput ? 'input' : 'attested', shape: 'fence', findings };
}
export function renderResultFormat(phase: string, snapshot: string, resultPath: string): string {
  return `## RESULT FORMAT\n\nINPUT: ${phase} ${snapshot}\n\nWrite to ${resultPath}. End with a \`\`\`gstack-findings fence.\n`;
}
