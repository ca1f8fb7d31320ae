/**
 * Recipes: finding, loading, validating and rendering them (SPEC: Recipes).
 * Each concern lives in its own module; this is the public surface.
 */
export type {Recipe, ArgSpec, ArgType, ResolvedRecipe, RuntimeValues} from './types.js'
export {recipeRoots, findRecipe, listRecipes, type RecipeRoot, type RecipeListing} from './roots.js'
export {loadRecipeFile, recipeNameOf, displayPath, RECIPE_EXTENSIONS, MAX_RECIPE_BYTES} from './load.js'
export {resolveRecipe} from './resolve.js'
export {recipeFields, recipeJsonSchema} from './schema.js'
export {validateRecipeFiles, type ValidationResult} from './validate.js'
export {describeRecipe, type RecipeDescription} from './describe.js'
export {formatArgSpec, formatArgType, parseArgSpec, convertArgValue} from './args.js'
export {shellSplit} from '../../base/platform/shell-split.js'
