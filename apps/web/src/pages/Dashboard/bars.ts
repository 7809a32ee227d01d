/** Geometry of the dashboard's bar chart (an SVG drawn by hand: no chart library in the bundle). */
export interface Bar {
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * One bar per value across `width`, bottoms on `height`, the tallest reaching the top; `gap` is the
 * share of each slot left empty. A zero value gets no height, and all-zero data draws no bar above 0.
 */
export function barGeometry(values: readonly number[], width: number, height: number, gap = 0.2): Bar[] {
  if (values.length === 0) return [];
  const max = Math.max(0, ...values);
  const slot = width / values.length;
  const barWidth = slot * (1 - gap);
  return values.map((value, index) => {
    const barHeight = max === 0 ? 0 : (Math.max(0, value) / max) * height;
    return {
      x: index * slot + (slot - barWidth) / 2,
      y: height - barHeight,
      width: barWidth,
      height: barHeight,
    };
  });
}

/** Which bars carry an axis label: about `count` of them, evenly spaced, always the last. */
export function labelledIndexes(length: number, count = 6): Set<number> {
  const step = Math.max(1, Math.ceil(length / count));
  const indexes = new Set<number>();
  for (let i = length - 1; i >= 0; i -= step) indexes.add(i);
  return indexes;
}
