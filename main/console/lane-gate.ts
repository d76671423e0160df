import { laneGateOf, type LaneGate } from '../../formats/console/gate-inbox.ts';
import { readRunBytes } from './run-files.ts';

// Bounds of what one inbox row reads from the lane's run directory.
const BRIEF_BYTES = 64 * 1024;
const GATE_BYTES = 1024 * 1024;
const FINDINGS_BYTES = 4 * 1024 * 1024;

/**
 * A waiting lane's gate as the inbox shows it, from its run directory: brief.md, gate.json
 * and findings.jsonl, each read as the lane page reads run files (a regular file of one
 * link inside the directory, never through a link) and bounded. A file that is absent,
 * too large or does not parse is shown as missing, never followed or guessed at.
 */
export function readLaneGate(lane: string, runDir: string): LaneGate {
  const brief = readBrief(runDir);
  const gate = parseJson(readRunBytes(runDir, 'gate.json', GATE_BYTES));
  const findings = (readRunBytes(runDir, 'findings.jsonl', FINDINGS_BYTES)?.toString('utf8') ?? '')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => parseJson(Buffer.from(line)))
    .filter((row) => row !== undefined);
  return laneGateOf(lane, brief, gate, findings);
}

function readBrief(runDir: string): { text: string; truncated: boolean } | null {
  const whole = readRunBytes(runDir, 'brief.md', BRIEF_BYTES);
  if (whole !== null) return { text: whole.toString('utf8'), truncated: false };
  // Larger than the bound: its start, said to be cut (readRunBytes reads whole files only).
  const start = readRunBytes(runDir, 'brief.md', 16 * 1024 * 1024);
  return start === null ? null : { text: start.subarray(0, BRIEF_BYTES).toString('utf8'), truncated: true };
}

function parseJson(bytes: Buffer | null): unknown {
  if (bytes === null) return undefined;
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch {
    return undefined;
  }
}

