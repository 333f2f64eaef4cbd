export function pad(s, n) {
  return String(s).padStart(n);
}

export default function format(items) {
  return items.map((i) => pad(i, 4)).join(',');
}
