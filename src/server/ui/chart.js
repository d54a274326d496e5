// A uPlot chart as a preact component: built once, fed new data on every render.
import { h } from './vendor/preact/preact.mjs';
import { useEffect, useRef } from './vendor/preact/hooks.mjs';
import uPlot from './vendor/uplot/uPlot.esm.js';

export const COLORS = ['#2f6fde', '#1a9e5a', '#d9822b', '#c73737', '#7b52c7', '#6b7785'];

/**
 * series: [{label, color?}]; data: [xs (seconds), ...ys]; bars: draw bars (the timeline).
 * xFormat: how an x value is shown on the axis when not time.
 */
export function Chart({ title, series, data, height = 180, bars = false, testid, yLabel }) {
  const box = useRef(null);
  const plot = useRef(null);
  const key = series.map((s) => s.label).join('|') + (bars ? ':bars' : '');
  useEffect(() => {
    const element = box.current;
    const width = () => Math.max(240, element.clientWidth || 320);
    const options = {
      width: width(),
      height,
      legend: { show: true },
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: true }, y: { range: (_u, min, max) => [0, Math.max(1, max)] } },
      axes: [{ stroke: '#6b7785' }, { stroke: '#6b7785', label: yLabel, size: 56 }],
      series: [
        {},
        ...series.map((s, i) => ({
          label: s.label,
          stroke: s.color ?? COLORS[i % COLORS.length],
          fill: bars ? (s.color ?? COLORS[i % COLORS.length]) + '99' : undefined,
          width: bars ? 0 : 2,
          points: { show: false },
          paths: bars ? uPlot.paths.bars({ size: [0.8, 40] }) : undefined,
        })),
      ],
    };
    plot.current = new uPlot(options, data, element);
    const resize = new ResizeObserver(() => plot.current?.setSize({ width: width(), height }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.current?.destroy();
      plot.current = null;
    };
  }, [key]);
  useEffect(() => {
    plot.current?.setData(data);
  }, [data]);
  return h('figure', { class: 'chart', 'data-testid': testid }, h('figcaption', null, title), h('div', { ref: box }));
}
