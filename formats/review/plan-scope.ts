/** Which optional phases a plan needs, and what decided it. */
export interface PlanScope {
  readonly ui: boolean;
  readonly dx: boolean;
  /** `ui:<flag|marker|detected>,dx:<...>`, printed on the SCOPE line. */
  readonly source: string;
  /** Why each was decided: the flag, the marker, or the word that was found. */
  readonly uiWhy: string;
  readonly dxWhy: string;
  /** The marker line to pin the choice, when flags disagree with the plan's marker or there is none. */
  readonly pin: string | null;
}

export interface ScopeFlags {
  readonly ui?: boolean;
  readonly dx?: boolean;
}

/** `<!-- laneward-scope: ui=yes dx=no -->` on the plan's first line pins the scope. */
const MARKER = /^<!--\s*laneward-scope:\s*(.*?)\s*-->\s*$/i;
const UI_WORDS = /\b(ui|user interface|frontend|front-end|screen|page|button|layout|css|component|dashboard|modal|form|design system|accessibility)\b/i;
const DX_WORDS = /\b(cli|command[- ]line|sdk|api|library|developer|flag|subcommand|plugin|config file|--help)\b/i;

export function detectScope(planText: string, flags: ScopeFlags): PlanScope {
  const first = planText.replace(/^\uFEFF/, '').split(/\r?\n/, 1)[0] ?? '';
  const marker = parseMarker(first);
  const ui = decide('ui', flags.ui, marker.ui, planText, UI_WORDS);
  const dx = decide('dx', flags.dx, marker.dx, planText, DX_WORDS);
  const flagged = flags.ui !== undefined || flags.dx !== undefined;
  const differs = flagged && (marker.ui !== ui.value || marker.dx !== dx.value);
  return {
    ui: ui.value,
    dx: dx.value,
    source: `ui:${ui.source},dx:${dx.source}`,
    uiWhy: ui.why,
    dxWhy: dx.why,
    pin: differs ? `<!-- laneward-scope: ui=${yes(ui.value)} dx=${yes(dx.value)} -->` : null,
  };
}

function decide(name: string, flag: boolean | undefined, marked: boolean | undefined, text: string, words: RegExp) {
  if (flag !== undefined) return { value: flag, source: 'flag', why: `--${flag ? '' : 'no-'}${name === 'ui' ? 'ui' : 'dx'}` };
  if (marked !== undefined) return { value: marked, source: 'marker', why: 'plan marker' };
  const found = words.exec(text);
  return { value: found !== null, source: 'detected', why: found === null ? 'none found' : `detected: ${found[0]}` };
}

function parseMarker(line: string): { ui?: boolean; dx?: boolean } {
  const match = MARKER.exec(line);
  if (match === null) return {};
  const out: { ui?: boolean; dx?: boolean } = {};
  for (const pair of match[1]!.split(/[\s,]+/)) {
    const [key, value] = pair.split('=');
    if ((key === 'ui' || key === 'dx') && (value === 'yes' || value === 'no')) out[key] = value === 'yes';
  }
  return out;
}

const yes = (value: boolean) => (value ? 'yes' : 'no');
