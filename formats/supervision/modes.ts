/** How an action's `timeout_ms` is enforced once its provider has started. */
const TIMEOUT_MODES = ['total_deadline', 'admitted_progress_inactivity'] as const;

/**
 * Where admitted progress comes from: the fd 3 byte channel, a stdout tracker, or
 * `preset`: the tracker of whichever provider preset the call runs (one signed action
 * for reviewers of two CLIs); a call that runs no preset is refused under it.
 */
export const PROGRESS_SOURCES = ['fd', 'step-lifecycle', 'claude-stream-json', 'codex-json', 'jsonl-counter', 'gemini-stream-json', 'preset'] as const;

export type TimeoutMode = (typeof TIMEOUT_MODES)[number];
export type ProgressSource = (typeof PROGRESS_SOURCES)[number];
