/**
 * "Did you mean": the closest known word to a mistyped command or option, when it is close
 * enough to be a typo (at most two edits, or one per three letters for longer words).
 */
export function closest(input: string, candidates: readonly string[]): string | undefined {
  let best: { word: string; d: number } | undefined;
  for (const word of new Set(candidates)) {
    const d = distance(input.toLowerCase(), word.toLowerCase());
    if (!best || d < best.d) best = { word, d };
  }
  const limit = Math.max(1, Math.min(2, Math.floor(input.length / 3)));
  return best && best.d > 0 && best.d <= limit ? best.word : undefined;
}

/** ` (did you mean "X"?)`, or nothing when no word is close. */
export function didYouMean(input: string, candidates: readonly string[], show: (w: string) => string = (w) => w): string {
  const c = closest(input, candidates);
  return c ? ` (did you mean "${show(c)}"?)` : '';
}

/** Edit distance with a swap of two neighbours as one edit (`emial` is one from `email`). */
function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i]![j] = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i]![j] = Math.min(d[i]![j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}
