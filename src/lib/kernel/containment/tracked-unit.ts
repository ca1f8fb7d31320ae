/**
 * A unit kept by tracking (SPEC: Containment), where no cgroup can be made:
 * its members are the command processes, their process groups and
 * descendants, and every process whose environment carries the unit's
 * marker (`ACTORS_RUN_INSTANCE=<id>` for a Run), found in /proc and
 * identity-checked by the caller's query. Ending and freezing sweep again
 * until a sweep finds nothing new, so a process forked meanwhile is caught.
 */
import {sleepSync} from '../../base/platform/sleep.js'
import {findRunProcesses, signalPids, type RunProcessQuery} from '../../base/platform/process-tree.js'
import {readProcUsage} from './proc-usage.js'
import {readProcStat} from '../../base/platform/process-identity.js'
import {carriesUnitMark} from './escapes.js'
import {endRecordArgs, type ContainmentRecord, type EndRecordTarget, type Unit, type UnitUsage} from './unit.js'
import {RECORD_END} from './end-record.js'

export class TrackedUnit implements Unit {
  private peak = 0
  /** Members found so far (pid -> start time), so one that cuts every other tie is still found. */
  private readonly seen = new Map<number, string>()

  /** `query` says where to look now (the verified command processes and the marker); read again on every sweep. */
  constructor(
    readonly record: Extract<ContainmentRecord, {kind: 'tracked'}>,
    private readonly query: () => RunProcessQuery,
  ) {}

  wrap(argv: string[], end?: EndRecordTarget): string[] {
    return end ? ['/bin/sh', '-c', RECORD_END, 'actors-run', ...endRecordArgs(end), ...argv] : argv
  }

  memberEnv(): Record<string, string> {
    const marker = this.record.marker
    const equals = marker?.indexOf('=') ?? -1
    return marker && equals > 0 ? {[marker.slice(0, equals)]: marker.slice(equals + 1)} : {}
  }

  members(): number[] {
    const query = this.query()
    // Ancestry seen before: a member that since left group, session and marker (its parent gone) is still one.
    for (const [pid, start] of this.seen) if (readProcStat(pid)?.start !== start) this.seen.delete(pid)
    const found = findRunProcesses({
      ...query,
      rootPids: [...query.rootPids, ...this.seen.keys()],
      ...(this.record.marker ? {marker: this.record.marker} : {}),
    })
    for (const pid of found) if (!this.seen.has(pid)) this.remember(pid, query.runInstanceId)
    return found
  }

  /** Keep `pid` as a member for good, unless it belongs to a unit of its own (a Run launched from inside). */
  private remember(pid: number, runInstanceId: string | undefined): void {
    const own = [runInstanceId && `ACTORS_RUN_INSTANCE=${runInstanceId}`, this.record.marker].filter(Boolean)
    const start = readProcStat(pid)?.start
    if (start !== undefined && !carriesUnitMark(pid, own as string[])) this.seen.set(pid, start)
  }

  strays(): number[] {
    // Runs launched from inside carry their own marker, never this one: no member is a nested Run.
    return this.members()
  }

  signal(signal: NodeJS.Signals): number[] {
    const pids = this.members()
    signalPids(pids, signal)
    return pids
  }

  kill(): void {
    for (let pass = 0; pass < 20; pass++) {
      if (this.signal('SIGKILL').length === 0) return
    }
  }

  freeze(): boolean {
    // SIGSTOP until a sweep finds no member that was not stopped already (one may fork while its siblings stop).
    const stopped = new Set<number>()
    for (let pass = 0; pass < 50; pass++) {
      const fresh = this.members().filter((pid) => !stopped.has(pid))
      if (fresh.length === 0) return true
      signalPids(fresh, 'SIGSTOP')
      for (const pid of fresh) stopped.add(pid)
      sleepSync(5)
    }
    return false
  }

  thaw(): void {
    this.signal('SIGCONT')
  }

  usage(fresh = true): UnitUsage {
    if (!fresh) return {cpu_seconds: null, memory_bytes: null, peak_memory_bytes: this.peak || null}
    let cpu = 0
    let rss = 0
    for (const pid of this.members()) {
      const usage = readProcUsage(pid)
      if (!usage) continue
      cpu += usage.cpu_seconds
      rss += usage.rss_bytes
      this.peak = Math.max(this.peak, usage.peak_rss_bytes)
    }
    this.peak = Math.max(this.peak, rss)
    return {cpu_seconds: Math.round(cpu * 1000) / 1000, memory_bytes: rss, peak_memory_bytes: this.peak}
  }

  limitHit(): undefined {
    return undefined
  }

  remove(): boolean {
    // Nothing to remove: a tracked unit is only a way of finding processes.
    return true
  }
}
