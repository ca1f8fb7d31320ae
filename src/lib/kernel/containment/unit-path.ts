/**
 * How the kernel names a unit's cgroup (cgroup-unit.ts unitsDir):
 * `<base>/actors/<home key>/<unit>`, the home key being homeKey(home), 16 hex
 * digits. Read back in two places: proof.ts (is a path a Run recorded the
 * cgroup actors made for it?) and caller-cgroup.ts (which Run is the calling
 * process in?).
 */

const HOME_KEY = /^[0-9a-f]{16}$/

/** The home key and unit name when `parts[at]` is a unit's folder (`parts`: a cgroup path split at `/`). */
export function unitAt(parts: readonly string[], at: number): {homeKey: string; unit: string} | undefined {
  if (at < 2 || parts[at - 2] !== 'actors' || !HOME_KEY.test(parts[at - 1] ?? '')) return undefined
  return {homeKey: parts[at - 1]!, unit: parts[at]!}
}

const RUN_UNIT = /^([A-Za-z0-9_.-]{1,128})@([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/

/**
 * The name of a Run's unit (its cgroup's folder): `<run id>@<run instance>`.
 * Both halves are checked when the kernel acts on it: the Run id is the name
 * of the state dir the kernel resolved from what it was asked (never read
 * from a file the Run can write), so a run.json that names another Run's
 * instance leads to a cgroup that does not exist, not to that Run's.
 */
export function runUnitName(run: string, instance: string): string {
  return `${run}@${instance}`
}

/** The Run id and instance a Run unit's name carries; undefined for any other name (a `lock exec` unit's). */
export function parseRunUnitName(name: string): {run: string; instance: string} | undefined {
  const match = RUN_UNIT.exec(name)
  return match ? {run: match[1]!, instance: match[2]!} : undefined
}
