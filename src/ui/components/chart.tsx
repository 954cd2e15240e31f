import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";
import type { ChartSpec } from "../view/history-charts.js";
import { formatNumber } from "./status.js";

const COLORS = ["#2563eb", "#16a34a", "#d97706", "#9333ea", "#dc2626", "#0891b2"];

/**
 * One uPlot chart per step. A series with a band gets two hidden series (lower, upper) and a
 * filled band between them. `data-points` counts the steps with a value in the first series, so
 * the page (and its tests) can tell what the canvas shows.
 */
export function StepChart({ spec }: { spec: ChartSpec }) {
  const container = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = container.current;
    if (!element || spec.series.length === 0) return;
    const data: (number | null)[][] = [spec.steps];
    const series: uPlot.Series[] = [{ label: "step" }];
    const bands: uPlot.Band[] = [];
    spec.series.forEach((line, index) => {
      const color = COLORS[index % COLORS.length]!;
      data.push(line.values);
      series.push({ label: line.label, stroke: color, width: 2, spanGaps: true, points: { show: true, size: 6, fill: color } });
      if (line.band) {
        const upper = data.push(line.band.upper) - 1;
        series.push({ label: `${line.label} +std`, stroke: "transparent", points: { show: false }, spanGaps: true });
        const lower = data.push(line.band.lower) - 1;
        series.push({ label: `${line.label} −std`, stroke: "transparent", points: { show: false }, spanGaps: true });
        bands.push({ series: [upper, lower], fill: `${color}22` });
      }
    });
    const width = Math.max(280, element.clientWidth || 420);
    const plot = new uPlot(
      {
        width,
        height: 200,
        series,
        bands,
        scales: { x: { time: false } },
        // Small values (learning rates) need exponent notation, not uPlot's fixed decimals.
        axes: [
          { label: "step", size: 40 },
          { size: 64, values: (_plot, splits) => splits.map((value) => formatNumber(value, 3)) },
        ],
        legend: { show: true, live: true },
        cursor: { drag: { x: false, y: false } },
      },
      data as uPlot.AlignedData,
      element,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(280, element.clientWidth), height: 200 }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [spec]);
  const points = spec.series[0]?.values.filter((value) => value !== null).length ?? 0;
  return (
    <section class="chart" data-chart={spec.id} data-points={points}>
      <h3>{spec.title}</h3>
      {spec.series.length === 0 ? <p class="muted">No data yet: rewards appear once a training job runs or trajectories are logged.</p> : <div ref={container} />}
    </section>
  );
}
