/**
 * The shell completion scripts `actors autocomplete script SHELL` prints, and
 * the setup text of `actors autocomplete [SHELL]` (the oclif autocomplete
 * plugin's convention). Each script asks `actors __complete` for the
 * candidates on every TAB, so Recipe names and live Run ids are always
 * current; the word being typed goes as `--current=WORD` so that an empty
 * one survives shells that drop empty arguments.
 */

export const SHELLS = ['bash', 'zsh', 'powershell'] as const
export type Shell = (typeof SHELLS)[number]

/** The completion script for `shell`, calling `bin` (the command name the user types). */
export function completionScript(shell: Shell, bin: string): string {
  const fn = `_${bin.replaceAll(/[^A-Za-z0-9_]/g, '_')}_complete`
  switch (shell) {
    case 'bash':
      return [
        `${fn}() {`,
        '  local IFS=$\'\\n\' cur="${COMP_WORDS[COMP_CWORD]}"',
        `  COMPREPLY=($(${bin} __complete "--current=$cur" -- "\${COMP_WORDS[@]:1:COMP_CWORD-1}" 2>/dev/null))`,
        '}',
        `complete -o default -F ${fn} ${bin}`,
        '',
      ].join('\n')
    case 'zsh':
      return [
        `${fn}() {`,
        '  local -a candidates',
        `  candidates=("\${(@f)$(${bin} __complete "--current=\${words[CURRENT]}" -- "\${(@)words[2,CURRENT-1]}" 2>/dev/null)}")`,
        '  if (( ${#candidates[@]} )) && [[ -n "${candidates[1]}" ]]; then compadd -- "${candidates[@]}"; else _files; fi',
        '}',
        `compdef ${fn} ${bin}`,
        '',
      ].join('\n')
    case 'powershell':
      return [
        `Register-ArgumentCompleter -Native -CommandName ${bin} -ScriptBlock {`,
        '  param($wordToComplete, $commandAst, $cursorPosition)',
        '  $words = @($commandAst.CommandElements | Select-Object -Skip 1 | ForEach-Object { $_.ToString() })',
        "  if ($wordToComplete -ne '' -and $words.Count -gt 0) { $words = @($words | Select-Object -SkipLast 1) }",
        `  & ${bin} __complete "--current=$wordToComplete" -- @words 2>$null | ForEach-Object {`,
        "    [System.Management.Automation.CompletionResult]::new($_, $_, 'ParameterValue', $_)",
        '  }',
        '}',
        '',
      ].join('\n')
  }
}

/** Where each shell reads its start-up file, and the line that loads the script. */
export function setupText(shell: Shell, bin: string): string {
  const line =
    shell === 'powershell'
      ? `${bin} autocomplete script powershell | Out-String | Invoke-Expression`
      : `eval "$(${bin} autocomplete script ${shell})"`
  const profile = shell === 'bash' ? '~/.bashrc' : shell === 'zsh' ? '~/.zshrc (after compinit)' : '$PROFILE'
  return [
    `Set up ${bin} completion for ${shell}:`,
    '',
    `  1) add this line to ${profile}:`,
    '',
    `     ${line}`,
    '',
    `  2) start a new shell (or run that line), then try: ${bin} <TAB><TAB>, ${bin} run <TAB>, ${bin} control <TAB>`,
    '',
    'Commands, flags, Recipe names and live Run ids complete.',
    '',
  ].join('\n')
}

/** The shell of $SHELL when it is one we support (the default of `actors autocomplete`). */
export function shellFromEnvironment(env: NodeJS.ProcessEnv = process.env): Shell | undefined {
  const name = (env.SHELL ?? '').split('/').at(-1) ?? ''
  return (SHELLS as readonly string[]).includes(name) ? (name as Shell) : name === 'pwsh' ? 'powershell' : undefined
}
