import { describe, expect, test } from 'vitest';
import { COMMANDS } from '../main/cli/commands.ts';
import { MAIN_HELP } from '../main/cli/main.ts';

describe('laneward --help', () => {
  test('should list every command of the command table and every subcommand of each group', async () => {
    const missing: string[] = [];
    for (const [name, load] of Object.entries(COMMANDS)) {
      // The lines of the list that start with the command's name.
      const lines = MAIN_HELP.split('\n').filter((line) => line.startsWith(`  ${name} `));
      if (lines.length === 0) missing.push(name);
      const entry = await load();
      if (entry.kind !== 'group') continue;
      const words = new Set(lines.flatMap((line) => line.trim().split(/\s+/)[1]!.split('|')));
      for (const sub of entry.commands) if (!words.has(sub.name)) missing.push(`${name} ${sub.name}`);
    }
    expect(missing).toEqual([]);
  });
});
