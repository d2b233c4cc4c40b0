const WIDTH = 60;
const HEIGHT = 16;

/**
 * A tiny inline SVG line of a series (a rule's hits over time): no axes, the peak in its accessible name. One
 * polyline, like the dashboard's charts; a chart library would outweigh the console.
 */
export function Sparkline({ values, label }: { values: readonly number[]; label: string }) {
  const peak = Math.max(0, ...values);
  const step = WIDTH / Math.max(1, values.length - 1);
  const y = (value: number) => (HEIGHT - 1 - (peak > 0 ? (value / peak) * (HEIGHT - 2) : 0)).toFixed(1);
  const points = values.map((value, index) => `${(index * step).toFixed(1)},${y(value)}`).join(' ');
  return (
    <svg class="sparkline" viewBox={`0 0 ${WIDTH} ${HEIGHT}`} preserveAspectRatio="none" role="img" aria-label={`${label}: ${values.length} points, peak ${Math.round(peak)}`}>
      <polyline points={values.length === 1 ? `0,${y(values[0])} ${WIDTH},${y(values[0])}` : points} />
    </svg>
  );
}
