import { accessSync, constants, statSync } from 'node:fs';

/**
 * Why `file` cannot be run as a program, or null when it can: what execvp(3) skips while
 * it walks PATH (absent, a directory, no execute permission).
 */
export function unrunnable(file: string): string | null {
  const stat = statSync(file, { throwIfNoEntry: false });
  if (stat === undefined) return 'does not exist';
  if (!stat.isFile()) return 'is not a regular file';
  try {
    accessSync(file, constants.X_OK);
  } catch {
    return 'is not executable';
  }
  return null;
}
