// Small SVG charts drawn from data: a line with one marked point per value. No library; the
// values only ever become attribute numbers and <title> text.
import { s, h } from './dom.js';

const WIDTH = 640;
const HEIGHT = 240;
const PAD = { left: 64, right: 16, top: 16, bottom: 40 };

/**
 * points: [{x: label text, y: number or null, title: tooltip text}], in order. A null value (a
 * ratio with nothing to count) is a gap: no point, the line broken there, never a 0. Returns a
 * figure with the chart and a caption; the table beside it carries the same data for screen
 * readers.
 */
export function lineChart(caption, points, { yLabel = '', id, onpoint } = {}) {
  const ys = points.filter((p) => p.y !== null).map((p) => p.y);
  let min = Math.min(...ys, 0);
  let max = Math.max(...ys, 1);
  if (min === max) max = min + 1;
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const step = points.length > 1 ? plotW / (points.length - 1) : 0;
  const xOf = (i) => PAD.left + (points.length > 1 ? i * step : plotW / 2);
  const yOf = (v) => PAD.top + plotH - ((v - min) / (max - min)) * plotH;
  const svg = s('svg', { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: 'img', class: 'chart', id,
    'aria-label': `${caption}: ${points.length} point${points.length === 1 ? '' : 's'}` },
  s('line', { x1: PAD.left, y1: PAD.top + plotH, x2: WIDTH - PAD.right, y2: PAD.top + plotH, class: 'axis' }),
  s('line', { x1: PAD.left, y1: PAD.top, x2: PAD.left, y2: PAD.top + plotH, class: 'axis' }),
  s('text', { x: PAD.left - 8, y: yOf(max) + 4, class: 'tick', 'text-anchor': 'end' }, formatNumber(max)),
  s('text', { x: PAD.left - 8, y: yOf(min) + 4, class: 'tick', 'text-anchor': 'end' }, formatNumber(min)),
  yLabel ? s('text', { x: 4, y: PAD.top - 4, class: 'tick' }, yLabel) : null);
  // One line per run of values between gaps.
  const runs = [[]];
  points.forEach((p, i) => (p.y === null ? runs.push([]) : runs[runs.length - 1].push(i)));
  for (const run of runs.filter((r) => r.length > 1)) {
    svg.append(s('polyline', { class: 'line', fill: 'none',
      points: run.map((i) => `${xOf(i).toFixed(1)},${yOf(points[i].y).toFixed(1)}`).join(' ') }));
  }
  points.forEach((p, i) => {
    if (p.y === null) return;
    // With `onpoint`, a point is a control: clicked, or focused and Enter or Space.
    const active = onpoint ? { tabindex: 0, role: 'button', 'aria-label': p.title, 'data-index': i,
      onclick: () => onpoint(i),
      onkeydown: (event) => { if (event.key === 'Enter' || event.key === ' ') { event.preventDefault(); onpoint(i); } } } : {};
    svg.append(s('circle', { class: onpoint ? 'point active' : 'point', cx: xOf(i).toFixed(1), cy: yOf(p.y).toFixed(1), r: 5, ...active },
      s('title', {}, p.title)));
  });
  // First and last x labels, so the time span is readable without crowding.
  if (points.length > 0) {
    svg.append(s('text', { x: xOf(0), y: HEIGHT - 12, class: 'tick', 'text-anchor': points.length > 1 ? 'start' : 'middle' }, points[0].x));
    if (points.length > 1) {
      svg.append(s('text', { x: xOf(points.length - 1), y: HEIGHT - 12, class: 'tick', 'text-anchor': 'end' }, points[points.length - 1].x));
    }
  }
  return h('figure', { class: 'chart-figure' }, svg, h('figcaption', {}, caption));
}

function formatNumber(value) {
  return Number.isInteger(value) ? String(value) : value.toFixed(2);
}
