export interface ChartSeries {
  label: string;
  values: readonly number[];
  /** CSS class giving the line its colour. */
  tone: 'in' | 'out' | 'cpu' | 'memory';
}

const WIDTH = 300;
const HEIGHT = 80;

function points(values: readonly number[], max: number, capacity: number): string {
  const step = WIDTH / Math.max(1, capacity - 1);
  const offset = capacity - values.length;
  return values.map((value, index) => `${((offset + index) * step).toFixed(1)},${(HEIGHT - (value / max) * (HEIGHT - 4) - 2).toFixed(1)}`).join(' ');
}

/**
 * A small SVG line chart of the last `capacity` samples. Hand-written on purpose: a polyline per series is
 * all the dashboard needs, and a chart library would outweigh the rest of the console.
 */
export function LineChart({ title, series, capacity, max, format }: { title: string; series: readonly ChartSeries[]; capacity: number; max?: number; format(value: number): string }) {
  const top = max ?? Math.max(1, ...series.flatMap((s) => s.values));
  return (
    <figure class="chart">
      <figcaption>
        {title}:{' '}
        {series.map((s) => (
          <span key={s.label} class={`legend ${s.tone}`}>
            {s.label} {s.values.length > 0 ? format(s.values[s.values.length - 1]) : '—'}
          </span>
        ))}
      </figcaption>
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} preserveAspectRatio="none" role="img" aria-label={`${title}, last ${capacity} seconds`}>
        {series.map((s) => (
          <polyline key={s.label} class={`line ${s.tone}`} points={points(s.values, top, capacity)} />
        ))}
      </svg>
    </figure>
  );
}
