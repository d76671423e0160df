import type { PresetName } from '../../formats/providers/names.ts';
import type { PresetRunner } from '../../formats/providers/runner.ts';
import { clientSetup, writeClientFiles } from './clients.ts';
import { text, toolCall, type Reply } from './replies.ts';
import type { ModelRequest } from './request.ts';
import type { Script } from './server.ts';

/**
 * The model of a whole crew, by the prompt it is sent: a reviewer's (it ends with the
 * RESULT FORMAT and its INPUT line) gets a review with no findings; an observer's gets a
 * passing verdict; an agent's turn n runs one shell command in its working directory
 * (appending a line to NOTES.md), then reports STATUS: continue, and done from turn
 * `doneAt` on. Every answer comes from the prompt alone, so one server serves every lane
 * and every CLI at once.
 */
export function crewScript(options: { readonly doneAt?: number } = {}): Script {
  const doneAt = options.doneAt ?? 2;
  return (request) => crewReply(request, doneAt);
}

export function crewReply(request: ModelRequest, doneAt = 2): Reply {
  const prompt = request.allUserText;
  const input = /^INPUT: (\S+) (\S+)$/m.exec(prompt);
  if (input !== null && prompt.includes('## RESULT FORMAT')) {
    return text(`INPUT: ${input[1]} ${input[2]}\n\nThe plan is sound and its steps are in order.\n\n\`\`\`gstack-findings\n\`\`\`\n`);
  }
  if (prompt.includes('laneward QA observer')) return text('```json\n{"verdict":"pass","note":"the turns match the plan"}\n```');
  const turn = /^# Lane (\S+), turn (\d+)$/m.exec(request.prompt) ?? /^# Lane (\S+), turn (\d+)$/m.exec(prompt);
  if (turn !== null) {
    const n = Number(turn[2]);
    if (request.toolResult === undefined) return shell(request.api, `printf 'lane ${turn[1]} turn ${n}\\n' >> NOTES.md`);
    return text(`Appended turn ${n} to NOTES.md.\nSTATUS: ${n >= doneAt ? 'done' : 'continue'}`);
  }
  return text('Nothing to do.');
}

/** One shell command as each CLI's own tool runs it (claude Bash, codex exec_command, gemini run_shell_command). */
export function shell(api: ModelRequest['api'], command: string): Reply {
  if (api === 'anthropic') return toolCall('Bash', { command, description: 'append a line' });
  if (api === 'openai') return toolCall('exec_command', { cmd: command });
  return toolCall('run_shell_command', { command });
}

/**
 * A preset runner for a crew file that points `preset`'s CLI at the fake server: its
 * private home under `dir` (written now), the fake key, no network lookups.
 */
export function fakeServerRunner(preset: PresetName, baseUrl: string, dir: string, extra: { readonly retries?: number; readonly model?: string } = {}): PresetRunner {
  const setup = clientSetup(preset, { baseUrl, dir, ...(extra.retries === undefined ? {} : { retries: extra.retries }), ...(extra.model === undefined ? {} : { model: extra.model }) });
  writeClientFiles(setup, dir);
  return { preset, ...(extra.model === undefined ? {} : { model: extra.model }), env: { ...setup.env } };
}
