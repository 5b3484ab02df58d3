// Medians with min/max, and the rendering of the result table.

/** { median, min, max, n } of the finite numbers in `xs` (null when there are none). */
export function summary(xs) {
  const v = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return null;
  const mid = v.length >> 1;
  const median = v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
  return { median, min: v[0], max: v.at(-1), n: v.length };
}

/** `12.3 ms (10.1–15.0)`; `—` without data. `scale` turns the unit (e.g. 1000 for s → ms). */
export function fmt(s, unit = "ms", digits = 1, scale = 1) {
  if (!s) return "—";
  const f = (x) => (x * scale).toFixed(digits);
  return `${f(s.median)} ${unit} (${f(s.min)}–${f(s.max)})`;
}

/** A signed median difference `b − a`, e.g. `+3.2 ms`; `—` when either is missing. */
export function added(a, b, unit = "ms", digits = 1, scale = 1) {
  if (!a || !b) return "—";
  const d = (b.median - a.median) * scale;
  return `${d >= 0 ? "+" : "−"}${Math.abs(d).toFixed(digits)} ${unit}`;
}

/** A markdown table from a header row and rows of cells. */
export function table(header, rows) {
  const line = (cells) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}
