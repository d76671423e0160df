import { issue, renderIssueLine, type Issue } from '../../formats/codes/issue.ts';
import type { Io } from './io.ts';

/**
 * Prints a run's (or a file's) kept error lines on stderr and, when more were counted
 * than kept, one ERRORS_OMITTED line saying how many more.
 */
export function printIssueLines(io: Io, context: string, errors: readonly Issue[], omitted: number): void {
  for (const found of errors) io.err(renderIssueLine(context, found));
  if (omitted > 0) io.err(renderIssueLine(context, issue('ERRORS_OMITTED', '', `${omitted} more error(s) not printed`)));
}
