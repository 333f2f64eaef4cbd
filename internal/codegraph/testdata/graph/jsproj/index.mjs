import format, { pad } from './lib/format.mjs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { createStore } = require('./lib/store.js');

export function main() {
  const store = createStore();
  store.set('a', pad('x', 2));
  return format(['a']);
}
