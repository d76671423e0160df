import { decodeUtf8 } from '../../formats/text/utf8.ts';
import { SUPERVISION_DEFAULTS } from '../../workers/supervise/spec.ts';
import { readBounded } from '../fs/read-bounded.ts';
import type { Frame, QaMode } from '../../formats/qa/record.ts';
import type { ToolEventFormat } from '../../formats/supervision/tool-policy.ts';
import { toolsNamed } from '../../workers/supervise/tool-guard.ts';

/** Frames kept per observer call, and characters per frame: the record stays small. */
export const FRAMES_PER_CALL = 200;
export const FRAME_TEXT_MAX = 1_000;

type Draft = Pick<Frame, 'kind' | 'text'>;

const objectAt = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;

/** What one stdout line of the observer shows: its thinking, its prose, the tools it starts. */
export function framesOfLine(format: ToolEventFormat, line: string): Draft[] {
  if (line.trim() === '') return [];
  let event: Record<string, unknown> | undefined;
  try {
    event = objectAt(JSON.parse(line));
  } catch {
    return [{ kind: 'line', text: line }];
  }
  if (event === undefined) return [{ kind: 'line', text: line }];
  const tools: Draft[] = toolsNamed(format, line).map((name) => ({ kind: 'tool', text: name }));
  if (format === 'codex-json') {
    const item = objectAt(event.item);
    if (event.type !== 'item.completed' || item === undefined) return tools;
    if (item.type === 'reasoning' && typeof item.text === 'string') return [{ kind: 'thinking', text: item.text }];
    if (item.type === 'agent_message' && typeof item.text === 'string') return [{ kind: 'text', text: item.text }];
    return [];
  }
  if (event.type !== 'assistant') return [];
  const content = objectAt(event.message)?.content;
  if (!Array.isArray(content)) return [];
  const drafts: Draft[] = [];
  for (const item of content) {
    const block = objectAt(item);
    if (block?.type === 'thinking' && typeof block.thinking === 'string') drafts.push({ kind: 'thinking', text: block.thinking });
    else if (block?.type === 'text' && typeof block.text === 'string') drafts.push({ kind: 'text', text: block.text });
    else if (block?.type === 'tool_use') drafts.push({ kind: 'tool', text: typeof block.name === 'string' ? block.name : '(unnamed)' });
  }
  return drafts;
}

/**
 * The frames of one call, read from the copy of its stdout (absent when it never ran):
 * each labelled with the call and its mode, at most {@link FRAMES_PER_CALL}, each cut to
 * {@link FRAME_TEXT_MAX} characters.
 */
export function readFrames(file: string, format: ToolEventFormat, call: number, mode: QaMode): Frame[] {
  // The observer can reach its call folder: a FIFO, a device, a symlink or bytes that are
  // not UTF-8 planted at its stdout copy give no frames, never a hang or a huge read.
  let text: string;
  try {
    const decoded = decodeUtf8(readBounded(file, SUPERVISION_DEFAULTS.stdoutLimit, { noFollow: true }).bytes);
    if (decoded.badLine !== null) return [];
    text = decoded.text;
  } catch {
    return [];
  }
  const frames: Frame[] = [];
  for (const line of text.split('\n')) {
    for (const draft of framesOfLine(format, line)) {
      if (frames.length === FRAMES_PER_CALL) return frames;
      frames.push({ call, mode, kind: draft.kind, text: draft.text.slice(0, FRAME_TEXT_MAX) });
    }
  }
  return frames;
}
