import type { Io } from './io.ts';

export async function leaseCommand(_args: readonly string[], _io: Io): Promise<number> {
  return 2;
}
