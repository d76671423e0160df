import { classifyTool, type ToolEventFormat, type ToolPolicy } from '../../formats/supervision/tool-policy.ts';
import { eventObject, objectAt } from './trackers/_event.ts';

// Codex items that are not tools: thinking, prose, the plan list, an error report.
const CODEX_NOT_TOOLS: ReadonlySet<unknown> = new Set(['reasoning', 'agent_message', 'todo_list', 'error']);

const NEEDLES: Readonly<Record<ToolEventFormat, readonly string[]>> = {
  'claude-stream-json': ['"tool_use"'],
  'codex-json': ['"item.started"', '"item.completed"'],
};

/** The tools one stdout line of `format` starts (or reports), by name; [] for anything else. */
export function toolsNamed(format: ToolEventFormat, line: string): string[] {
  const event = eventObject(line, NEEDLES[format]);
  if (event === undefined) return [];
  if (format === 'codex-json') {
    if (event.type !== 'item.started' && event.type !== 'item.completed') return [];
    const type = objectAt(event.item)?.type;
    return typeof type === 'string' && !CODEX_NOT_TOOLS.has(type) ? [type] : [];
  }
  if (event.type !== 'assistant') return [];
  const content = objectAt(event.message)?.content;
  if (!Array.isArray(content)) return [];
  const names: string[] = [];
  for (const item of content) {
    const block = objectAt(item);
    if (block?.type === 'tool_use') names.push(typeof block.name === 'string' ? block.name : '');
  }
  return names;
}

/**
 * Checks each stdout line against a tool policy: the first tool of a class the policy
 * does not allow is returned (and the supervisor ends the call with TOOL_DENIED). A tool
 * is seen when the provider's stream names it, which may be as it starts: the policy is
 * also passed to the provider so that its own runtime refuses the tool first.
 */
export class ToolGuard {
  private readonly policy: ToolPolicy;
  private readonly allowed: ReadonlySet<string>;

  constructor(policy: ToolPolicy) {
    this.policy = policy;
    this.allowed = new Set(policy.allow);
  }

  /** The first denied tool the line names, or undefined. */
  check(line: string): string | undefined {
    for (const name of toolsNamed(this.policy.events, line)) {
      if (!this.allowed.has(classifyTool(this.policy.events, name))) return name === '' ? '(unnamed)' : name;
    }
    return undefined;
  }
}
