/** The hidden `actors __complete --current=WORD -- WORDS...` the completion scripts call: one candidate a line on stdout. */
import {resolveHome} from '../../base/platform/home.js'
import {writeOut} from '../present/write.js'
import {isInert} from '../../base/platform/text.js'
import {recipeNames, recipeRoots} from '../../kernel/recipes/roots.js'
import {listRunIds, requireRun} from '../../kernel/runs/store.js'
import {listRunSummaries} from '../../kernel/history/inspect.js'
import {LIVE_STATUSES} from '../../base/records/run.js'
import {ARG_KINDS, completions, type CompletionCommand, type CompletionSources} from './complete.js'

/** A command as oclif's classes describe it: enough to know its flags. */
interface CommandShape {
  flags?: Record<string, {type: string; options?: readonly string[]}>
}

/** The completion view of the command surface (oclif's command classes), plus `help`. */
export function completionSurface(commands: Record<string, CommandShape>): Record<string, CompletionCommand> {
  const surface: Record<string, CompletionCommand> = {}
  const all: Record<string, CommandShape> = {...commands, help: {}}
  for (const [id, shape] of Object.entries(all)) {
    const flags: CompletionCommand['flags'] = {}
    for (const [name, flag] of Object.entries(shape.flags ?? {}))
      flags[name] = {takesValue: flag.type === 'option', options: flag.options}
    surface[id] = {flags, args: ARG_KINDS[id]?.args ?? [], rest: ARG_KINDS[id]?.rest}
  }
  return surface
}

/** Candidates read from the state root of `--home` (among the words) or the environment; a broken root yields none. */
function stateSources(words: string[]): CompletionSources {
  const at = words.findIndex((w) => w === '--home' || w.startsWith('--home='))
  const flag = at === -1 ? undefined : words[at].includes('=') ? words[at].slice(7) : words[at + 1]
  const guard = (read: () => string[]) => {
    try {
      return read()
    } catch {
      return []
    }
  }
  return {
    recipes: () => guard(() => recipeNames(recipeRoots({home: resolveHome(flag)}))),
    runs: (liveOnly) =>
      guard(() =>
        liveOnly
          ? listRunSummaries(resolveHome(flag), {statuses: new Set(LIVE_STATUSES)}).runs.map((r) => r.run)
          : listRunIds(resolveHome(flag)),
      ),
    actions: (run) => guard(() => requireRun(resolveHome(flag), run).meta.control ?? []),
  }
}

/** Answer `__complete` for `argv` (after the command word): writes the candidates, never fails loudly. */
export function serveCompletion(commands: Record<string, CommandShape>, argv: string[]): void {
  const current = argv.find((a) => a.startsWith('--current='))?.slice('--current='.length) ?? ''
  const dash = argv.indexOf('--')
  const words = dash === -1 ? [] : argv.slice(dash + 1)
  // A shell draws candidates on the terminal and types them: a name a cloned repository's Recipe file gives
  // itself with ESC or a bidi override in it is dropped, never offered (escaped, it would name nothing).
  const lines = completions(completionSurface(commands), words, current, stateSources(words)).filter(isInert)
  if (lines.length > 0) writeOut(lines.join('\n') + '\n')
}
