/** `actors autocomplete [SHELL]` (how to set completion up) and `actors autocomplete script SHELL` (the script itself). */
import {usageError} from '../../base/platform/errors.js'
import {completionScript, setupText, shellFromEnvironment, SHELLS, type Shell} from './completion-scripts.js'
import {documentResult} from '../present/result.js'
import {defineCommand} from './definition.js'

const BIN = 'actors'

/** The shell named, else $SHELL's, else a usage error naming the choices. */
function chosenShell(given: string | undefined): Shell {
  const shell = given ?? shellFromEnvironment()
  if (shell === undefined)
    throw usageError('cannot tell your shell from $SHELL', `name it: \`actors autocomplete ${SHELLS.join('|')}\``)
  if (!(SHELLS as readonly string[]).includes(shell))
    throw usageError(`unsupported shell "${shell}"`, `use one of ${SHELLS.join(', ')}`)
  return shell as Shell
}

export const autocompleteCommand = defineCommand({
  id: 'autocomplete',
  summary: 'Set up shell completion (commands, flags, Recipe names, live Run ids)',
  description:
    'Prints the setup steps for SHELL (default: from $SHELL). The script itself is `actors autocomplete script SHELL`.',
  examples: [
    '<%= config.bin %> autocomplete',
    '<%= config.bin %> autocomplete bash',
    'eval "$(<%= config.bin %> autocomplete script bash)"',
  ],
  args: {shell: {description: 'bash, zsh or powershell'}},
  flags: {},

  async run({args}) {
    const shell = chosenShell(args.shell)
    return documentResult({shell, setup: setupText(shell, BIN), script: completionScript(shell, BIN)}, (doc, to) =>
      to.out(doc.setup),
    )
  },
})

export const autocompleteScriptCommand = defineCommand({
  id: 'autocomplete:script',
  summary: 'Print the completion script for SHELL (load it from your shell start-up file)',
  examples: [
    'eval "$(<%= config.bin %> autocomplete script bash)"',
    '<%= config.bin %> autocomplete script zsh >> ~/.zshrc',
  ],
  args: {shell: {description: 'bash, zsh or powershell', required: true}},
  flags: {},

  async run({args}) {
    const shell = chosenShell(args.shell)
    return documentResult({shell, script: completionScript(shell, BIN)}, (doc, to) => to.out(doc.script))
  },
})
