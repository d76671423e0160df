/**
 * The fix a failed call's own words point at, where they are recognisable: a missing
 * key, a program not found, a provider's refusal. Null for anything else (the code's own
 * fix clause stands then). The line is quoted as kept (already escaped and bounded).
 */
export function evidenceFix(line: string): string | null {
  const said = `(the call said "${line}")`;
  const unset = /\b([A-Z][A-Z0-9_]{1,127})\b(?: environment variable)? (?:is )?(?:not set|unset|missing|is required)/.exec(line);
  if (unset !== null) return `set ${unset[1]} in the environment the crew runs in ${said}, then retry the lane`;
  const missing = /(?:^|[\s'"`])([^\s:'"`]+)['"`]?: (?:command )?not found|([^\s:'"`]+)['"`]?: No such file or directory/.exec(line);
  if (missing !== null) return `install ${missing[1] ?? missing[2]} or fix the runner's argv in the crew file ${said}, then retry the lane`;
  if (/\b(?:api error|error|unauthori[sz]ed|forbidden|invalid[ _-]api[ _-]key|rate.?limit|quota|overloaded|40[13]|429|5\d\d)\b/i.test(line)) {
    return `the provider refused the call or failed ${said}: fix what it names (key, model, quota), then retry the lane`;
  }
  return null;
}
