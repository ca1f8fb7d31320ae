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
