import { usage } from './args.ts';

/**
 * An empty path argument (an unset variable, `validate "$RUN"`) is a usage error: the
 * file system would read it as the current directory, and ack would record a consumer
 * of whatever run happens to be there.
 */
export function refuseEmptyPaths(paths: readonly string[]): void {
  const at = paths.indexOf('');
  if (at !== -1) throw usage(`path argument ${at + 1} is empty (an unset variable?); name a file or directory`);
}
