import type { Io } from './io.ts';

export async function deadlineCommand(_args: readonly string[], _io: Io): Promise<number> {
  return 2;
}
