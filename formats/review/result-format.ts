import { oneLine } from '../text/one-line.ts';
import { SEVERITY_LIST } from './severity.ts';

/**
 * The RESULT FORMAT section every prompt file ends with: what `submit` will enforce, in
 * the order a reviewer writes it. The example rows are real findings rows, so a result
 * copied from this text binds (a test holds it to that).
 */
export function renderResultFormat(phase: string, snapshot: string, resultPath: string): string {
  const fence = '```';
  return [
    '## RESULT FORMAT',
    '',
    'Your result is read by a program, not a person. A result that breaks these rules is refused.',
    '',
    '1. The first line of your result is exactly the line below, with nothing before it. It',
    '   binds your result to the plan snapshot you reviewed:',
    '',
    `INPUT: ${oneLine(phase)} ${oneLine(snapshot)}`,
    '',
    '2. Then write your review as prose. End it with exactly one fenced block whose opening',
    `   line is ${fence}gstack-findings and whose closing line is ${fence}. Inside it, write one`,
    '   finding per line, each line one JSON object, for example:',
    '',
    `${fence}gstack-findings`,
    '{"id":"F1","severity":"High","title":"The retry loop never gives up","file":"src/retry.ts","line":12,"fix":"Stop after five attempts"}',
    '{"id":"F2","severity":"Medium","title":"Drop the second region from this plan","user_challenge":true,"changes":"scope"}',
    '{"id":"F3","severity":"Critical","title":"Backups are written world-readable","urgent":true,"suggested_owner":"storage team"}',
    fence,
    '',
    `   - "severity" (required): ${SEVERITY_LIST}.`,
    '   - "title" (required): one line saying what is wrong.',
    '   - "id" (your own label), "file", "line" (a positive whole number) and "fix" (what to',
    '     change) are optional; give them when you can.',
    '   - "user_challenge": true marks a finding that recommends changing the direction the plan',
    '     states. It must carry "changes": "scope", "cost" or "direction": what accepting it',
    '     would change.',
    '   - "urgent": true marks a security or data-loss problem this plan does not own. It must',
    '     carry "suggested_owner": who should take it.',
    '',
    '3. If you found nothing, leave the block empty: the opening line directly followed by the',
    '   closing line. An empty block means no findings; a result without the block is refused.',
    '',
    `4. Write the whole result, first line to last, to this file: ${oneLine(resultPath)}`,
    '',
  ].join('\n');
}
