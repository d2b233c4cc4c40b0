/**
 * The Prometheus text exposition format (version 0.0.4): one writer through which every family, label and value
 * of GET /api/v1/metrics/prometheus passes. Label values come from configuration (rule descriptions, gateway and
 * tunnel names), so they are escaped here and nowhere else: a value can never end its label, start a sample or
 * a comment line.
 */

export type MetricType = 'counter' | 'gauge' | 'histogram';
export type Labels = Readonly<Record<string, string>>;

export interface Sample {
  labels?: Labels;
  value: number;
  /** For histograms: the suffix of this sample's name (`_bucket`, `_sum`, `_count`). */
  suffix?: string;
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** A label value inside double quotes: backslash, double quote and line feed escaped (the format's three). */
export function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** HELP text: backslash and line feed escaped. */
export function escapeHelp(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

/** A sample value as the format writes it (Go's float syntax for the special values). */
export function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(value);
}

function formatLabels(labels: Labels | undefined): string {
  if (!labels) return '';
  const entries = Object.entries(labels);
  if (entries.length === 0) return '';
  return `{${entries.map(([name, value]) => {
    if (!LABEL_NAME.test(name) || name.startsWith('__')) throw new Error(`invalid Prometheus label name: ${name}`);
    return `${name}="${escapeLabelValue(value)}"`;
  }).join(',')}}`;
}

export class PrometheusText {
  private readonly lines: string[] = [];
  private readonly names = new Set<string>();

  /** One metric family: HELP, TYPE and its samples (a family without samples is left out). */
  family(name: string, type: MetricType, help: string, samples: readonly Sample[]): this {
    if (!METRIC_NAME.test(name)) throw new Error(`invalid Prometheus metric name: ${name}`);
    if (this.names.has(name)) throw new Error(`metric family ${name} written twice`);
    if (samples.length === 0) return this;
    this.names.add(name);
    this.lines.push(`# HELP ${name} ${escapeHelp(help)}`, `# TYPE ${name} ${type}`);
    for (const sample of samples) this.lines.push(`${name}${sample.suffix ?? ''}${formatLabels(sample.labels)} ${formatValue(sample.value)}`);
    return this;
  }

  /** A histogram family from cumulative bucket counts (upper bounds ascending; +Inf added), sum and count per label set. */
  histogram(name: string, help: string, series: readonly { labels: Labels; bounds: readonly number[]; cumulative: readonly number[]; sum: number; count: number }[]): this {
    const samples: Sample[] = [];
    for (const one of series) {
      one.bounds.forEach((bound, index) => samples.push({ suffix: '_bucket', labels: { ...one.labels, le: formatValue(bound) }, value: one.cumulative[index] }));
      samples.push({ suffix: '_bucket', labels: { ...one.labels, le: '+Inf' }, value: one.count });
      samples.push({ suffix: '_sum', labels: one.labels, value: one.sum });
      samples.push({ suffix: '_count', labels: one.labels, value: one.count });
    }
    return this.family(name, 'histogram', help, samples);
  }

  /** Adds the families another writer holds (a family name still appears once). */
  append(other: PrometheusText): this {
    for (const name of other.names) {
      if (this.names.has(name)) throw new Error(`metric family ${name} written twice`);
      this.names.add(name);
    }
    this.lines.push(...other.lines);
    return this;
  }

  text(): string {
    return this.lines.length ? `${this.lines.join('\n')}\n` : '';
  }
}
