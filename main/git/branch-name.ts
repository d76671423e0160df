/**
 * Why `name` cannot be a git branch name (`git check-ref-format --branch`), or null. Crew
 * names and lane ids are already letters, digits, '.', '_' and '-', so only git's rules on
 * dots and the `.lock` suffix can still refuse one; the other rules are checked too, so the
 * answer holds for any name. Checked here, in one place, rather than by one git process per
 * lane of a crew of thousands.
 */
export function branchNameProblem(name: string): string | null {
  if (name === '' || name === '@') return 'it is empty or "@"';
  if (name.startsWith('-')) return 'it starts with "-"';
  if (name.endsWith('.')) return 'it ends with "."';
  if (name.includes('..')) return 'it contains ".."';
  if (name.includes('@{')) return 'it contains "@{"';
  if (/[\u0000-\u0020\u007f~^:?*[\\]/.test(name)) return 'it contains a space, a control character or one of ~ ^ : ? * [ \\';
  if (name.startsWith('/') || name.endsWith('/') || name.includes('//')) return 'it has an empty path component';
  for (const part of name.split('/')) {
    if (part.startsWith('.')) return `its component ${JSON.stringify(part)} starts with "."`;
    if (part.endsWith('.lock')) return `its component ${JSON.stringify(part)} ends with ".lock"`;
  }
  return null;
}

/**
 * The branch a crew's lane works on: one per lane and crew run, `laneward/<crew>/<run>/<lane>`,
 * so a crew of the same name run again on the same repository (another state root, another
 * out) starts every lane afresh from its own base instead of continuing the branch an
 * earlier run left; `crew clean` finds every one under `laneward/<crew>/`.
 */
export function laneBranch(crew: string, lane: string, run: string): string {
  return `laneward/${crew}/${run}/${lane}`;
}

/** The lane id of a branch {@link laneBranch} named (its last component), for listings. */
export function laneOfBranch(branch: string): string {
  return branch.slice(branch.lastIndexOf('/') + 1);
}
