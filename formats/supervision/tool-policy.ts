/**
 * Tool policies: which kinds of tool a supervised provider may use, read from the tool
 * events its own stdout stream names. Pure data: the classes, the formats that name
 * tools, and the table from a tool's name to its class.
 */

/** What a tool can do: read files, search the web, run commands, change files, or anything else. */
export const TOOL_CLASSES = ['read', 'search', 'shell', 'write', 'other'] as const;
export type ToolClass = (typeof TOOL_CLASSES)[number];

/** The stdout formats whose events name the tools a provider starts. */
export const TOOL_EVENT_FORMATS = ['claude-stream-json', 'codex-json'] as const;
export type ToolEventFormat = (typeof TOOL_EVENT_FORMATS)[number];

/** Plain data carried in a supervision spec: a tool of a class outside `allow` ends the call (TOOL_DENIED). */
export interface ToolPolicy {
  /** The name of the policy (the QA mode), for messages. */
  readonly name: string;
  readonly events: ToolEventFormat;
  readonly allow: readonly ToolClass[];
}

export function isToolEventFormat(value: unknown): value is ToolEventFormat {
  return (TOOL_EVENT_FORMATS as readonly unknown[]).includes(value);
}

// Claude Code's tool names. Anything not listed (Task, TodoWrite, mcp__*) is `other`:
// a restricted policy denies what it cannot classify.
const CLAUDE: Readonly<Record<string, ToolClass>> = {
  Read: 'read',
  Glob: 'read',
  Grep: 'read',
  LS: 'read',
  NotebookRead: 'read',
  WebSearch: 'search',
  WebFetch: 'search',
  Bash: 'shell',
  BashOutput: 'shell',
  KillShell: 'shell',
  KillBash: 'shell',
  Edit: 'write',
  MultiEdit: 'write',
  Write: 'write',
  NotebookEdit: 'write',
};

// Codex item types that are tools; reading a file is a command there.
const CODEX: Readonly<Record<string, ToolClass>> = {
  command_execution: 'shell',
  local_shell_call: 'shell',
  web_search: 'search',
  file_change: 'write',
  mcp_tool_call: 'other',
};

/** The class of a tool named in an event of `format`. */
export function classifyTool(format: ToolEventFormat, name: string): ToolClass {
  const table = format === 'claude-stream-json' ? CLAUDE : CODEX;
  return Object.hasOwn(table, name) ? table[name]! : 'other';
}

/** The tools of `format` in the given classes, and the others it names: a CLI's own allow and deny lists. */
export function toolsByClass(format: ToolEventFormat, allow: readonly ToolClass[]): { allowed: string[]; denied: string[] } {
  const table = format === 'claude-stream-json' ? CLAUDE : CODEX;
  const allowed: string[] = [];
  const denied: string[] = [];
  for (const [name, cls] of Object.entries(table)) (allow.includes(cls) ? allowed : denied).push(name);
  return { allowed, denied };
}
