/** The document `actors recipes [NAME] --json` prints, shared with the MCP `recipes` tool. */
import {describeRecipe, type RecipeDescription} from './describe.js'
import {findRecipe, listRecipes, recipeRoots, type RecipeListing, type RecipeRoot} from './roots.js'

export type RecipesDocument = RecipeDescription | {recipes: RecipeListing[]; roots: RecipeRoot[]}

/** One Recipe described (NAME given), or every Recipe of the roots of `home` (and `--recipes`). */
export function recipesDocument(home: string, options: {name?: string; recipesFlag?: string}): RecipesDocument {
  const roots = recipeRoots({recipesFlag: options.recipesFlag, home})
  if (options.name !== undefined) return describeRecipe(findRecipe(options.name, roots))
  return {recipes: listRecipes(roots), roots}
}
