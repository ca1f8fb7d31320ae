/**
 * Code-unit string order. `localeCompare` depends on the process locale and
 * loads ICU collation data on first use (measurable at start-up); ids and ISO
 * timestamps need neither.
 */
export function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0
}
