// Placeholder until the providers branch lands; replaced on merge.
import { accessSync, constants } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import type { PresetName } from '../../formats/providers/names.ts';
import { PRESETS } from '../../formats/providers/presets.ts';

export function locateCli(preset: PresetName, where: { cwd: string; env: NodeJS.ProcessEnv; cacheDir?: string }): { path: string; found: string } | null {
  const binary = PRESETS[preset].binary;
  const dirs = [...(where.env['PATH'] ?? '').split(delimiter).map((d) => resolve(where.cwd, d)), join(where.cwd, 'node_modules', '.bin'), join(where.cacheDir ?? join(where.cwd, '.laneward', 'clis'), 'node_modules', '.bin')];
  for (const dir of dirs) {
    try {
      accessSync(join(dir, binary), constants.X_OK);
      return { path: join(dir, binary), found: dir };
    } catch {}
  }
  return null;
}
