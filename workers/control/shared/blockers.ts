/**
 * What stands in the way of a refused action, in its message: the first few by name and how many
 * more, so a person (or an agent reading the 409) knows where to go without a second request.
 * `details` still carries every id.
 */
export function namedFew(names: readonly string[], shown = 5): string {
  const first = names.slice(0, shown).join(", ");
  const rest = names.length - shown;
  return rest > 0 ? `${first} and ${rest} more` : first;
}

/** `noun` followed by the names ("issues ACM-3, ACM-7"), or nothing when there are none. */
export function blockerPart(noun: string, names: readonly string[]): string[] {
  return names.length === 0 ? [] : [`${noun} ${namedFew(names)}`];
}
