/**
 * Sets `key` in `map` as its newest entry and drops the oldest past `max`: the per-isolate and
 * per-object memories (issue locations, confirmed memberships, an IssueDO's details and feeds) are
 * bounded this way, so none grows with the data it has seen.
 */
export function rememberBounded<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > max) {
    const oldest = map.keys().next();
    if (!oldest.done) map.delete(oldest.value);
  }
}
