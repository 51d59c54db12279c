/**
 * A memo that forgets everything once it holds `limit` entries: a document's text repeats its words and formulas, so
 * most look-ups hit, and a hostile one cannot grow it without bound.
 */
export class BoundedCache<K, V> {
  readonly #entries = new Map<K, V>();
  readonly #limit: number;

  constructor(limit: number) {
    this.#limit = limit;
  }

  get(key: K, compute: () => V): V {
    if (this.#entries.has(key)) return this.#entries.get(key) as V;
    const value = compute();
    if (this.#entries.size >= this.#limit) this.#entries.clear();
    this.#entries.set(key, value);
    return value;
  }
}
