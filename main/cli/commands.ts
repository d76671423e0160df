import type { Command, Group } from './command.ts';

/** The command table, in help order: each entry loads its module only when it is called (docs/commands.md walks it). */
export const COMMANDS: Readonly<Record<string, () => Promise<Command | Group>>> = {
  init: async () => (await import('./init.ts')).INIT,
  artifact: async () => (await import('./artifact.ts')).ARTIFACT,
  gate: async () => (await import('./gate.ts')).GATE,
  deadline: async () => (await import('./deadline.ts')).DEADLINE,
  lease: async () => (await import('./lease.ts')).LEASE,
  actions: async () => (await import('./actions.ts')).ACTIONS,
  plan: async () => (await import('./plan.ts')).PLAN,
  trail: async () => (await import('./trail.ts')).TRAIL,
  brief: async () => (await import('./brief.ts')).BRIEF,
  demo: async () => (await import('./demo.ts')).DEMO,
  crew: async () => (await import('./crew.ts')).CREW,
  qa: async () => (await import('./qa.ts')).QA,
  providers: async () => (await import('./providers.ts')).PROVIDERS,
};
