/** Checking Recipe files on demand (`actors recipes validate`), reporting every file rather than stopping at the first. */
import {readdirSync} from 'node:fs'
import {dirname, extname, join, resolve} from 'node:path'
import {isActorsError} from '../../base/platform/errors.js'
import {isDirectory} from '../../base/platform/state-files.js'
import {displayPath, loadRecipeFile, RECIPE_EXTENSIONS} from './load.js'
import {compareText} from '../../base/platform/compare.js'
import {checkUses} from './use.js'

export interface ValidationResult {
  file: string
  ok: boolean
  /** The Recipe's name relative to the file's own directory, when it loaded. */
  name?: string
  error?: string
  fix?: string
}

function expand(path: string, out: string[]): void {
  // Not a directory, or missing: a missing path is reported by loadRecipeFile with a proper message.
  if (!isDirectory(path)) {
    out.push(path)
    return
  }
  for (const entry of readdirSync(path, {withFileTypes: true}).sort((a, b) => compareText(a.name, b.name))) {
    if (entry.name.startsWith('.') || entry.name === 'node_modules') continue
    const child = join(path, entry.name)
    if (entry.isDirectory()) expand(child, out)
    else if ((RECIPE_EXTENSIONS as readonly string[]).includes(extname(entry.name))) out.push(child)
  }
}

/**
 * Validate each path (a Recipe file, or a directory searched for them).
 * Problems are returned, not thrown, so a caller can print them all.
 */
export function validateRecipeFiles(paths: string[], cwd = process.cwd()): ValidationResult[] {
  const files: string[] = []
  for (const path of paths) expand(resolve(cwd, path), files)
  return files.map((file) => {
    try {
      const recipe = loadRecipeFile(file, dirname(file))
      checkUses(recipe) // `use` steps: the used Recipe exists, no cycle, with: fits its args
      return {file: displayPath(file), ok: true, name: recipe.name}
    } catch (error) {
      if (!isActorsError(error)) throw error
      return {file: displayPath(file), ok: false, error: error.message, ...(error.fix ? {fix: error.fix} : {})}
    }
  })
}
