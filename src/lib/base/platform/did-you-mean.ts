/** Suggesting the nearest known name for a typo, for "did you mean" fixes. */

function distance(a: string, b: string): number {
  const prev = Array.from({length: b.length + 1}, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]
    prev[0] = i
    for (let j = 1; j <= b.length; j++) {
      const up = prev[j]
      prev[j] = Math.min(prev[j] + 1, prev[j - 1] + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1))
      diag = up
    }
  }
  return prev[b.length]
}

/** The closest candidate within a small edit distance, so fixes only suggest plausible typos. */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined
  let bestDistance = Math.max(2, Math.floor(word.length / 3)) + 1
  for (const candidate of candidates) {
    const d = distance(word.toLowerCase(), candidate.toLowerCase())
    if (d < bestDistance) {
      best = candidate
      bestDistance = d
    }
  }
  return best
}

/** `did you mean "x"? ` prefix (or nothing) for a fix message. */
export function didYouMean(word: string, candidates: readonly string[]): string {
  const match = closest(word, candidates)
  return match ? `did you mean "${match}"? ` : ''
}
