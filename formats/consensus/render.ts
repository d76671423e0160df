import type { Consensus, ConsensusEntry } from './types.ts';
import { oneLine } from '../text/one-line.ts';

const VERDICT_WORDS: Record<ConsensusEntry['verdict'], string> = {
  confirmed: 'confirmed by native',
  disagree: 'disagrees on severity with native',
  unverified: 'unverified, near native',
  new: 'new, no native counterpart',
};

/**
 * The human-readable consensus record (`<phase>-consensus.md`). `titles` maps finding ids to
 * titles; every value taken from input goes through oneLine, so a title can never start a
 * line of its own. The JSON record is the data; this is its reading copy.
 */
export function renderConsensusMarkdown(c: Consensus, titles: ReadonlyMap<string, string>): string {
  const title = (id: string): string => {
    const text = titles.get(id);
    return text === undefined ? '(no title recorded)' : oneLine(text);
  };
  const lines = [
    `# Consensus: ${oneLine(c.phase)}`,
    '',
    c.coverage === 'both'
      ? 'Coverage: both voices reviewed this phase.'
      : 'Coverage: native voice only; the outside voice did not bind, so nothing here is confirmed by a second voice.',
    '',
    `confirmed=${c.confirmed} unverified=${c.unverified} disagree=${c.disagree} new=${c.new} native_only=${c.native_only}`,
    '',
    '## Outside findings',
    '',
  ];
  if (c.entries.length === 0) lines.push(c.coverage === 'both' ? 'None.' : 'None (no outside voice).');
  for (const e of c.entries) {
    const severities = e.severities === null ? '' : ` (outside ${e.severities[0]}, native ${e.severities[1]})`;
    const partner = e.native === null ? '' : ` ${oneLine(e.native)}`;
    lines.push(`- ${oneLine(e.outside)}: ${VERDICT_WORDS[e.verdict]}${partner}${severities}`);
    lines.push(`  - outside: ${title(e.outside)}`);
    if (e.native !== null) lines.push(`  - native: ${title(e.native)}`);
  }
  lines.push('', '## Native findings no outside finding was paired with', '');
  if (c.native_only_ids.length === 0) lines.push('None.');
  for (const id of c.native_only_ids) lines.push(`- ${oneLine(id)}: ${title(id)}`);
  return `${lines.join('\n')}\n`;
}
