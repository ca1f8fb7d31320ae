/**
 * Action names, in one place for everyone who checks them: the Recipe loader
 * (a Recipe's `control:` list), the control journal (a name given to
 * `actors control`) and the router (which names the kernel applies itself).
 * A leaf module: it imports nothing, so any layer may use it.
 */

/** Actions every Run accepts; the kernel applies them unless the Recipe declares the same name (never `kill`). */
export const RUNTIME_ACTIONS = ['pause', 'resume', 'stop', 'kill', 'status', 'interrupt'] as const
export type RuntimeAction = (typeof RUNTIME_ACTIONS)[number]

/** Whether `action` is one of the kernel's own actions. */
export function isRuntimeAction(action: string): action is RuntimeAction {
  return (RUNTIME_ACTIONS as readonly string[]).includes(action)
}

/** What an action name looks like: lowercase letters, digits, "_" and "-", starting with a letter. */
export const ACTION_PATTERN = /^[a-z][a-z0-9_-]*$/
/** Longest action name (SPEC: Control). */
export const MAX_ACTION_CHARS = 64

/** Whether `name` is a well-formed action name within the length bound. */
export function isActionName(name: string): boolean {
  return name.length <= MAX_ACTION_CHARS && ACTION_PATTERN.test(name)
}
