// Syntax errors: what parses is kept.
import { Logger } from './logger';

export class Cache<K, V> {
  private store = new Map<K, V>();

  get(key: K): V | undefined {
    return this.store.get(key);
  }

  set(key: K, value: V: void {
    this.store.set(key, value);
  }

  clear(): void {
    this.store.clear();
  }
}

interface Options {
  ttl: number
  max number;
}

function create<K, V>(opts: Options): Cache<K, V> {
  new Logger().info('create', opts);
  return new Cache<K, V>();
}

export const evict = (c: Cache<string, unknown>) => {
  c.clear(;
};
