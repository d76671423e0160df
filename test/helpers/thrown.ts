import { isLanewardError } from '../../formats/codes/error.ts';

/** The result code `fn` throws, 'none' when it returns, or the error itself when it is untyped. */
export function codeOf(fn: () => unknown): string {
  try {
    fn();
    return 'none';
  } catch (error) {
    return isLanewardError(error) ? error.code : `untyped: ${String(error)}`;
  }
}
