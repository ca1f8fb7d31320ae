/**
 * Shell completion: what can come next on an `actors` command line. The
 * scripts `actors autocomplete script SHELL` prints call the hidden
 * `actors __complete --current=WORD -- WORDS...` and show its lines; this
 * module decides them from the command surface (commands, flags, flag
 * options) and from the state root (Recipe names, Run ids).
 */
import {RUNTIME_ACTIONS} from '../../base/records/actions.js'

/** What completion needs to know of one command. */
export interface CompletionCommand {
  /** The flags by name (without `--`): whether each takes a value, and the values it accepts when they are fixed. */
  flags: Record<string, {takesValue: boolean; options?: readonly string[]}>
  /** What each positional argument names, in order (`rest` repeats the last one). */
  args: readonly ArgKind[]
  rest?: boolean
}

/** What a positional argument names: completed from the state root, a fixed list, or nothing (files, by the shell). */
export type ArgKind = 'recipe' | 'run' | 'live-run' | 'action' | 'shell' | 'command' | 'none'

/** Where dynamic candidates come from (read lazily: only the kind asked for is read). */
export interface CompletionSources {
  recipes(): string[]
  runs(liveOnly: boolean): string[]
  /** The actions a Run declares (its Recipe's `control`), beyond the kernel's own. */
  actions(run: string): string[]
}

const GLOBAL_FLAGS = ['--help', '--json', '--home']
const SHELLS = ['bash', 'zsh', 'powershell']

/**
 * The candidates for `current`, the word being typed, after `words` (what
 * precedes it, without `actors`), keeping those that start with `current`.
 * Empty when the shell should fall back to file names.
 */
export function completions(
  commands: Record<string, CompletionCommand>,
  words: string[],
  current: string,
  sources: CompletionSources,
): string[] {
  const ids = Object.keys(commands)
  let consumed = 0
  let id = ''
  while (consumed < words.length && !words[consumed].startsWith('-')) {
    const next = id ? `${id}:${words[consumed]}` : words[consumed]
    if (!ids.some((known) => known === next || known.startsWith(`${next}:`))) break
    id = next
    consumed++
    // A complete command with no deeper one under it: the rest are its arguments.
    if (Object.hasOwn(commands, id) && !ids.some((known) => known.startsWith(`${id}:`))) break
  }
  const command = Object.hasOwn(commands, id) ? commands[id] : undefined
  const prefixed = (list: Iterable<string>) => [...new Set(list)].filter((c) => c.startsWith(current)).sort()
  if (current.startsWith('-'))
    return prefixed([...Object.keys(command?.flags ?? {}).map((f) => `--${f}`), ...GLOBAL_FLAGS])
  const rest = words.slice(consumed)
  const previous = rest.at(-1)
  // `--home DIR`: a directory, which the shell completes.
  if (previous === '--home') return []
  if (command && previous?.startsWith('--') && !previous.includes('=')) {
    const flag = command.flags[previous.slice(2)]
    if (flag?.takesValue) return prefixed(flag.options ?? [])
  }
  const below = id ? ids.filter((known) => known.startsWith(`${id}:`)) : ids
  const nextWords = below.map((known) => known.slice(id ? id.length + 1 : 0).split(':')[0])
  if (!command) return prefixed(id ? nextWords : [...nextWords, 'help'])
  // `recipes ` and `autocomplete `: a deeper command or the first argument.
  if (rest.length === 0 && below.length > 0)
    return prefixed([...nextWords, ...argCandidates(command.args[0] ?? 'none', commands, sources, [])])
  const given = positionals(command, rest)
  if (given === undefined) return []
  const kind = command.args[given.length] ?? (command.rest ? command.args.at(-1) : undefined) ?? 'none'
  return prefixed(argCandidates(kind, commands, sources, given))
}

/** The positional words `rest` holds (flags and the values they take skipped); undefined after `--`. */
function positionals(command: CompletionCommand, rest: string[]): string[] | undefined {
  const words: string[] = []
  for (let i = 0; i < rest.length; i++) {
    const word = rest[i]
    if (word === '--') return undefined
    if (!word.startsWith('-')) words.push(word)
    else if (
      word === '--home' ||
      (word.startsWith('--') && !word.includes('=') && command.flags[word.slice(2)]?.takesValue)
    )
      i++
  }
  return words
}

function argCandidates(
  kind: ArgKind,
  commands: Record<string, CompletionCommand>,
  sources: CompletionSources,
  given: string[],
): string[] {
  switch (kind) {
    case 'recipe':
      return sources.recipes()
    case 'run':
      return sources.runs(false)
    case 'live-run':
      return sources.runs(true)
    case 'action':
      // The Run named before it (`control RUN <TAB>`) adds what its Recipe declares (volume, next, seek).
      return [...RUNTIME_ACTIONS, ...(given[0] ? sources.actions(given[0]) : [])]
    case 'shell':
      return SHELLS
    case 'command':
      return [...new Set(Object.keys(commands).map((id) => id.split(':')[0]))]
    case 'none':
      return []
  }
}

/** What the positional arguments of each command name (commands not listed take nothing completable). */
export const ARG_KINDS: Record<string, {args: ArgKind[]; rest?: boolean}> = {
  run: {args: ['recipe']},
  rerun: {args: ['run']},
  control: {args: ['live-run', 'action']},
  send: {args: ['live-run']},
  wait: {args: ['live-run'], rest: true},
  inspect: {args: ['run']},
  logs: {args: ['run']},
  prune: {args: ['run'], rest: true},
  adopt: {args: ['run']},
  recipes: {args: ['recipe']},
  autocomplete: {args: ['shell']},
  'autocomplete:script': {args: ['shell']},
  help: {args: ['command']},
}
