/** Every top-level command, in help order. The launcher routes by these names alone. */
export const COMMAND_NAMES = ['artifact', 'gate', 'deadline', 'lease', 'actions', 'plan', 'trail', 'brief', 'demo', 'crew', 'qa'] as const;

export type CommandName = (typeof COMMAND_NAMES)[number];
