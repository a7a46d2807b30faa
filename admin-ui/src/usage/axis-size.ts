// The y axis as wide as its longest tick label (a fixed width clipped large or long cost labels).
import type uPlot from 'uplot';

const MIN_WIDTH = 40;
const PADDING = 8;

/** uPlot's axis `size` callback: called with the formatted tick labels until the width settles. */
export function fitLabels(self: uPlot, values: string[] | null, axisIdx: number, cycleNum: number): number {
  const axis = self.axes[axisIdx]! as uPlot.Axis & { _size?: number; font: unknown };
  if (cycleNum > 1 && axis._size !== undefined) return axis._size; // uPlot re-asks after resizing: stop it oscillating
  const longest = (values ?? []).reduce((a, b) => (b.length > a.length ? b : a), '');
  if (longest === '') return MIN_WIDTH;
  // uPlot keeps the font as [css font, px size, css px size] once scaled for the device's pixel ratio.
  self.ctx.font = Array.isArray(axis.font) ? String(axis.font[0]) : String(axis.font);
  const width = self.ctx.measureText(longest).width / (window.devicePixelRatio || 1);
  return Math.max(MIN_WIDTH, Math.ceil(width + (axis.gap ?? 5) + PADDING));
}
