// TEMP STUB (lead): replaced by the helper's implementation at merge.
export interface FamilyAnswer { readonly family: string | null; readonly prefix: string | null; readonly source: 'builtin' | 'file' | null }
export function modelFamily(model: string, extra?: Readonly<Record<string, string>>): FamilyAnswer {
  const m = model.toLowerCase().split('/').pop() ?? '';
  for (const [p, f] of Object.entries(extra ?? {})) if (m.startsWith(p)) return { family: f, prefix: p, source: 'file' };
  for (const [p, f] of [['claude', 'anthropic'], ['gpt', 'openai'], ['gemini', 'google']] as const) if (m.startsWith(p)) return { family: f, prefix: p, source: 'builtin' };
  return { family: null, prefix: null, source: null };
}
export function parseFamilyTable(text: string): { ok: true; table: Record<string, string> } | { ok: false; message: string } { return { ok: true, table: JSON.parse(text) as Record<string, string> }; }
export function familiesConflict(a: FamilyAnswer, b: FamilyAnswer): boolean { return a.family !== null && a.family === b.family; }
