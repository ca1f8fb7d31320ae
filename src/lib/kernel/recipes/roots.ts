/**
 * Where Recipes live and how a name finds its file. Roots are searched in
 * the SPEC's order and the first match wins, so a project or user can shadow
 * a shipped Recipe by name.
 */
import {existsSync, readdirSync, realpathSync, statSync} from 'node:fs'
import {delimiter, extname, isAbsolute, join, resolve} from 'node:path'
import {isActorsError, usageError} from '../../base/platform/errors.js'
import {packageRoot} from '../../base/platform/package-root.js'
import {isDirectory} from '../../base/platform/state-files.js'
import {formatArgSpec} from './args.js'
import {loadRecipeFile, RECIPE_EXTENSIONS, recipeNameOf} from './load.js'
import type {Recipe} from './types.js'
import {compareText} from '../../base/platform/compare.js'
import {didYouMean} from '../../base/platform/did-you-mean.js'

export interface RecipeRoot {
  dir: string
  /** Why this root is searched: `flag`, `env`, `cwd`, `home` or `package`. */
  origin: string
}

/**
 * The recipe roots for this invocation, in search order, deduplicated by
 * real path; directories that do not exist are skipped.
 */
export function recipeRoots(options: {recipesFlag?: string; home: string; cwd?: string}): RecipeRoot[] {
  const cwd = options.cwd ?? process.cwd()
  const candidates: RecipeRoot[] = []
  if (options.recipesFlag) candidates.push({dir: resolve(cwd, options.recipesFlag), origin: 'flag'})
  for (const dir of (process.env.ACTORS_RECIPES ?? '').split(delimiter)) {
    if (dir) candidates.push({dir: resolve(cwd, dir), origin: 'env'})
  }
  candidates.push({dir: resolve(cwd, 'recipes'), origin: 'cwd'})
  candidates.push({dir: join(resolve(options.home), 'recipes'), origin: 'home'})
  try {
    candidates.push({dir: join(packageRoot(), 'recipes'), origin: 'package'})
  } catch {
    // Running from an unusual layout without bin/actors: no shipped library.
  }
  const seen = new Set<string>()
  const roots: RecipeRoot[] = []
  for (const root of candidates) {
    if (!isDirectory(root.dir)) continue
    const real = realpathSync(root.dir)
    if (seen.has(real)) continue
    seen.add(real)
    roots.push(root)
  }
  return roots
}

const NAME_SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/

function isRecipeFile(path: string): boolean {
  return (RECIPE_EXTENSIONS as readonly string[]).includes(extname(path)) && existsSync(path) && statSync(path).isFile()
}

/**
 * Find and load a Recipe by name (`build`, `music/playback`), or take a
 * direct path to a Recipe file (`./my.yaml`). Names that could escape a
 * root are refused; a miss names every root searched.
 */
export function findRecipe(name: string, roots: RecipeRoot[], cwd = process.cwd()): Recipe {
  const direct = resolve(cwd, name)
  if (
    (RECIPE_EXTENSIONS as readonly string[]).includes(extname(name)) &&
    (name.includes('/') || isRecipeFile(direct))
  ) {
    if (!isRecipeFile(direct))
      throw usageError(`Recipe file ${name} does not exist`, 'check the path, or list Recipes with `actors recipes`')
    return loadRecipeFile(direct, resolve(direct, '..'))
  }
  const segments = name.split('/')
  if (isAbsolute(name) || segments.some((s) => !NAME_SEGMENT.test(s) || s === '..' || s === '.')) {
    throw usageError(
      `Recipe name ${JSON.stringify(name)} is not valid`,
      'use a name below a recipe root such as build or music/playback (no "..", no absolute paths), or a path to a .yaml file such as ./my.yaml',
    )
  }
  for (const root of roots) {
    for (const ext of RECIPE_EXTENSIONS) {
      const file = join(root.dir, ...segments) + ext
      if (isRecipeFile(file)) return loadRecipeFile(file, root.dir)
    }
  }
  const searched = roots.length ? roots.map((r) => `${r.dir} (${r.origin})`).join(', ') : 'no recipe root exists'
  throw usageError(
    `no Recipe named "${name}" (searched: ${searched})`,
    `${didYouMean(name, recipeNames(roots))}list the available Recipes with \`actors recipes\`, or pass --recipes DIR`,
    {
      recipe: name,
      roots: roots.map((r) => r.dir),
    },
  )
}

export interface RecipeListing {
  name: string
  description: string
  args: string[]
  root: string
  origin: string
  file: string
  /** Set when the file does not load: the listing shows it instead of failing. */
  error?: string
  fix?: string
}

const MAX_DEPTH = 8

/** Every Recipe file below `dir`, with its name, in a stable order (extension order decides ties). */
function walk(dir: string, root: string, depth: number, out: Array<{name: string; file: string}>): void {
  let entries
  try {
    entries = readdirSync(dir, {withFileTypes: true})
  } catch {
    return
  }
  entries.sort((a, b) => compareText(a.name, b.name))
  for (const entry of entries) {
    if (entry.name.startsWith('.') || entry.name === 'node_modules') continue
    const path = join(dir, entry.name)
    if (entry.isDirectory()) {
      if (depth < MAX_DEPTH) walk(path, root, depth + 1, out)
    } else if (
      (RECIPE_EXTENSIONS as readonly string[]).includes(extname(entry.name)) &&
      (entry.isFile() || isRecipeFile(path))
    ) {
      out.push({name: recipeNameOf(path, root), file: path})
    }
  }
}

/** The names of every Recipe file below `roots`, without loading any (what a "did you mean" compares a miss with). */
export function recipeNames(roots: RecipeRoot[]): string[] {
  const found: Array<{name: string; file: string}> = []
  for (const root of roots) walk(root.dir, root.dir, 0, found)
  return [...new Set(found.map((f) => f.name))]
}

/**
 * List the Recipes visible through `roots`, first match winning per name as
 * in findRecipe. A broken file is listed with its error so one bad Recipe
 * never hides the others.
 */
export function listRecipes(roots: RecipeRoot[]): RecipeListing[] {
  const byName = new Map<string, RecipeListing>()
  for (const root of roots) {
    const found: Array<{name: string; file: string}> = []
    walk(root.dir, root.dir, 0, found)
    const rank = (file: string) => (RECIPE_EXTENSIONS as readonly string[]).indexOf(extname(file))
    found.sort((a, b) => compareText(a.name, b.name) || rank(a.file) - rank(b.file))
    for (const {name, file} of found) {
      if (byName.has(name)) continue
      const base = {name, root: root.dir, origin: root.origin, file}
      try {
        const recipe = loadRecipeFile(file, root.dir)
        byName.set(name, {...base, description: recipe.description, args: recipe.args.map(formatArgSpec)})
      } catch (error) {
        if (!isActorsError(error)) throw error
        byName.set(name, {
          ...base,
          description: '',
          args: [],
          error: error.message,
          ...(error.fix ? {fix: error.fix} : {}),
        })
      }
    }
  }
  return [...byName.values()].sort((a, b) => compareText(a.name, b.name))
}
