/**
 * A Map of at most `max` entries that drops the oldest insertion to make room: the caches of hot
 * paths (prepared statements, verified tokens, query vectors), where a miss only costs recomputing.
 * A reader that wants least-recently-used order deletes and sets again on a hit.
 */
export class BoundedMap<K, V> extends Map<K, V> {
  constructor(private readonly max: number) {
    super();
  }

  override set(key: K, value: V): this {
    if (this.size >= this.max && !this.has(key)) this.delete(this.keys().next().value!);
    return super.set(key, value);
  }
}
