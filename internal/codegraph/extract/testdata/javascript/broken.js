// Syntax errors: what parses is kept.
import { a } from './a';

function ok() {
  return a();
}

function badExpression(x) {
  const y = ;
  helper(x, y);
}

class Partial {
  method() {
    if (ok( {
      ok();
    }
  }

  other() {
    return this.method();
  }
}

const after = () => ok();

// A file cut off in the middle of a function.
export function truncated(items) {
  items.forEach((item) => {
    process(item);
