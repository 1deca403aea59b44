/**
 * The similarity measure Django's UserAttributeSimilarityValidator uses:
 * `difflib.SequenceMatcher(a, b).quick_ratio()`.
 *
 * quick_ratio ignores order: it counts the characters the two strings have in common (as
 * multisets) and returns 2 × common / (len(a) + len(b)). It is an upper bound on
 * SequenceMatcher.ratio(), cheaper to compute, and the value Django compares with max_similarity,
 * so a password Django refuses is refused here too. Lengths count code points, as Python's do.
 */
export function quickRatio(a: string, b: string): number {
  const aCharacters = Array.from(a);
  const bCharacters = Array.from(b);
  const total = aCharacters.length + bCharacters.length;
  // difflib defines two empty strings as identical.
  if (total === 0) return 1;

  const unmatchedInB = new Map<string, number>();
  for (const character of bCharacters) unmatchedInB.set(character, (unmatchedInB.get(character) ?? 0) + 1);
  let matches = 0;
  for (const character of aCharacters) {
    const remaining = unmatchedInB.get(character) ?? 0;
    if (remaining > 0) {
      matches += 1;
      unmatchedInB.set(character, remaining - 1);
    }
  }
  return (2 * matches) / total;
}

/**
 * Django's quick rejection (exceeds_maximum_length_ratio): when the password is at least ten
 * times as long as the value, and the value too short to reach `maxSimilarity` even if every one
 * of its characters matched, the ratio cannot reach the limit and is not computed. It keeps a very
 * long password from costing a long comparison against every attribute.
 */
export function exceedsMaximumLengthRatio(password: string, maxSimilarity: number, value: string): boolean {
  const passwordLength = codePointLength(password);
  const valueLength = codePointLength(value);
  return passwordLength >= 10 * valueLength && valueLength < (maxSimilarity / 2) * passwordLength;
}

/** Python's len() of a str: code points, not UTF-16 units. */
export function codePointLength(text: string): number {
  let length = 0;
  for (const _character of text) length += 1;
  return length;
}
