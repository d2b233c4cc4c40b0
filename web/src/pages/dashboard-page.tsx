import { useEffect, useState } from 'preact/hooks';
import { useSession } from '../auth/session-context';
import { DataTable } from '../components/data-table';
import { ErrorAlert } from '../components/error-alert';
import { formatBitRate, formatBytes, formatCount, formatDuration, formatTime, formatValue } from '../components/format';
import { LineChart } from '../components/line-chart';
import { DashboardFeed, type Connection, type FeedState, type StatusFrame } from '../live/dashboard-feed';
import { ServicesPanel } from './dashboard-services';

/** Seconds of history the charts keep. */
const CHART_SECONDS = 120;

interface Samples {
  bpsIn: number[];
  bpsOut: number[];
  cpu: number[];
  /** Bytes: history entries carry no total, so the percentage is taken against the latest frame's total. */
  memoryUsed: number[];
}

const emptySamples = (): Samples => ({ bpsIn: [], bpsOut: [], cpu: [], memoryUsed: [] });

function appendSamples(samples: Samples, frames: readonly StatusFrame[]): Samples {
  const next = { bpsIn: [...samples.bpsIn], bpsOut: [...samples.bpsOut], cpu: [...samples.cpu], memoryUsed: [...samples.memoryUsed] };
  for (const frame of frames) {
    next.bpsIn.push(frame.traffic?.bps_in ?? 0);
    next.bpsOut.push(frame.traffic?.bps_out ?? 0);
    next.cpu.push(frame.system?.cpu_usage ?? 0);
    next.memoryUsed.push(frame.system?.memory_used ?? 0);
  }
  for (const key of Object.keys(next) as (keyof Samples)[]) next[key] = next[key].slice(-CHART_SECONDS);
  return next;
}

const FEED_STATE_TEXT: Record<FeedState, string> = {
  connecting: 'Connecting…',
  live: 'Live',
  reconnecting: 'Connection lost, reconnecting…',
  refused: 'Not connected',
};

export function DashboardPage() {
  const { api } = useSession();
  const [frame, setFrame] = useState<StatusFrame | null>(null);
  const [connections, setConnections] = useState<Connection[]>([]);
  const [samples, setSamples] = useState<Samples>(emptySamples);
  const [feedState, setFeedState] = useState<{ state: FeedState; detail?: string }>({ state: 'connecting' });

  useEffect(() => {
    const feed = new DashboardFeed(api, {
      history: (frames) => setSamples(appendSamples(emptySamples(), frames)),
      frame: (latest, heaviest) => {
        setFrame(latest);
        setConnections(heaviest);
        setSamples((current) => appendSamples(current, [latest]));
      },
      state: (state, detail) => setFeedState({ state, detail }),
    });
    feed.start();
    return () => feed.stop();
  }, [api]);

  const status = frame?.status ?? {};
  const system = frame?.system ?? {};
  const memoryPercent = system.memory_total ? samples.memoryUsed.map((used) => (used / system.memory_total!) * 100) : [];
  return (
    <div class="page dashboard">
      <header class="page-head">
        <h1>Dashboard</h1>
        <p class={`feed ${feedState.state}`} role="status">
          {FEED_STATE_TEXT[feedState.state]}
          {frame?.seq !== undefined && feedState.state === 'live' && (
            <>
              {' '}
              — update <span data-field="seq">{frame.seq}</span> at {formatTime(frame.ts)}
            </>
          )}
          {frame?.simulated && ' (simulated platform: synthetic traffic)'}
        </p>
      </header>
      <ErrorAlert message={feedState.state === 'refused' ? feedState.detail : null} />

      <section class="panel" aria-label="Status">
        <h2>Status</h2>
        <dl class="stats">
          <div>
            <dt>Packet filter</dt>
            <dd>{frame ? (status.pf_running ? 'running' : 'stopped') : '—'}</dd>
          </div>
          <div>
            <dt>State table</dt>
            <dd data-field="states">{formatCount(frame?.connections_total)}</dd>
          </div>
          <div>
            <dt>Rules active</dt>
            <dd>
              {formatValue(status.rules_active)} of {formatValue(status.rules_total)}
            </dd>
          </div>
          <div>
            <dt>Throughput in</dt>
            <dd data-field="bps_in">{formatBitRate(frame?.traffic?.bps_in)}</dd>
          </div>
          <div>
            <dt>Throughput out</dt>
            <dd data-field="bps_out">{formatBitRate(frame?.traffic?.bps_out)}</dd>
          </div>
          <div>
            <dt>CPU</dt>
            <dd>{system.cpu_usage === undefined ? '—' : `${system.cpu_usage.toFixed(0)} %`}</dd>
          </div>
          <div>
            <dt>Memory</dt>
            <dd>{system.memory_used === undefined ? '—' : `${formatBytes(system.memory_used)} of ${formatBytes(system.memory_total)}`}</dd>
          </div>
          <div>
            <dt>Uptime</dt>
            <dd>{formatDuration(system.uptime_secs)}</dd>
          </div>
        </dl>
      </section>

      <section class="panel charts" aria-label="Charts">
        <h2>Throughput and load</h2>
        <div class="chart-row">
          <LineChart
            title="Throughput"
            capacity={CHART_SECONDS}
            format={formatBitRate}
            series={[
              { label: 'in', values: samples.bpsIn, tone: 'in' },
              { label: 'out', values: samples.bpsOut, tone: 'out' },
            ]}
          />
          <LineChart
            title="CPU and memory"
            capacity={CHART_SECONDS}
            max={100}
            format={(value) => `${value.toFixed(0)} %`}
            series={[
              { label: 'CPU', values: samples.cpu, tone: 'cpu' },
              { label: 'memory', values: memoryPercent, tone: 'memory' },
            ]}
          />
        </div>
      </section>

      <ServicesPanel packetFilterRunning={frame ? Boolean(status.pf_running) : null} />

      <div class="columns">
        <section class="panel" aria-label="Top talkers">
          <h2>Top talkers</h2>
          <DataTable
            caption="Top talkers"
            rows={frame?.top_talkers ?? []}
            rowKey={(row) => row.addr}
            columns={[
              { key: 'addr', label: 'Address' },
              { key: 'flows', label: 'Flows' },
              { key: 'bytes_in', label: 'In', render: (row) => formatBytes(row.bytes_in) },
              { key: 'bytes_out', label: 'Out', render: (row) => formatBytes(row.bytes_out) },
            ]}
          />
        </section>
        <section class="panel" aria-label="Interfaces">
          <h2>Interfaces</h2>
          <DataTable
            caption="Interfaces"
            rows={frame?.interfaces ?? []}
            rowKey={(row) => row.name}
            columns={[
              { key: 'name', label: 'Interface' },
              { key: 'bps_in', label: 'In', render: (row) => formatBitRate(row.bps_in) },
              { key: 'bps_out', label: 'Out', render: (row) => formatBitRate(row.bps_out) },
            ]}
          />
        </section>
      </div>

      <section class="panel" aria-label="Recent blocked traffic">
        <h2>Recent blocked traffic</h2>
        <DataTable
          caption="Recent blocked traffic"
          rows={(frame?.blocked ?? []).slice(0, 10)}
          rowKey={(row, index) => `${String(row.timestamp)}-${index}`}
          columns={[
            { key: 'timestamp', label: 'Time', render: (row) => formatTime(row.timestamp as string) },
            { key: 'interface', label: 'Interface' },
            { key: 'protocol', label: 'Protocol' },
            { key: 'src', label: 'Source', render: (row) => `${formatValue(row.src_addr)}:${formatValue(row.src_port)}` },
            { key: 'dst', label: 'Destination', render: (row) => `${formatValue(row.dst_addr)}:${formatValue(row.dst_port)}` },
            { key: 'reason', label: 'Reason' },
          ]}
        />
      </section>

      {(frame?.failing_assertions?.length ?? 0) > 0 && (
        <section class="panel" aria-label="Failing assertions">
          <h2>Failing assertions</h2>
          <DataTable
            caption="Assertions that do not hold"
            rows={frame!.failing_assertions!}
            rowKey={(row) => row.id}
            empty="Every assertion holds."
            columns={[
              { key: 'name', label: 'Assertion' },
              { key: 'checked_at', label: 'Checked', render: (row) => formatTime(row.checked_at) },
              { key: 'outcome', label: 'Found', render: (row) => `${row.outcome} (expects ${row.expect})` },
              { key: 'detail', label: 'What decided it', render: (row) => `${row.decided_by}: ${row.detail}` },
            ]}
          />
        </section>
      )}

      <section class="panel" aria-label="IDS alerts">
        <h2>IDS alerts</h2>
        <p>
          {formatCount(frame?.ids_alerts?.alerts_total)} in total, {formatCount(frame?.ids_alerts?.new_alerts)} new since the last update.
        </p>
        <DataTable
          caption="Recent IDS alerts"
          rows={(frame?.ids_alerts?.recent_alerts ?? []).slice(0, 10)}
          rowKey={(row, index) => String(row.id ?? index)}
          empty="No alerts."
          columns={[
            { key: 'timestamp', label: 'Time', render: (row) => formatTime(row.timestamp as string) },
            { key: 'severity', label: 'Severity' },
            { key: 'signature', label: 'Signature', render: (row) => formatValue(row.signature_msg ?? row.signature) },
            { key: 'src_ip', label: 'Source' },
            { key: 'dst_ip', label: 'Destination' },
          ]}
        />
      </section>

      <section class="panel" aria-label="Connections">
        <h2>Heaviest connections</h2>
        <DataTable
          caption="Heaviest connections"
          rows={connections.slice(0, 15)}
          rowKey={(row) => `${row.protocol}|${row.src_addr}:${row.src_port}|${row.dst_addr}:${row.dst_port}`}
          columns={[
            { key: 'protocol', label: 'Protocol' },
            { key: 'src', label: 'Source', render: (row) => `${row.src_addr}:${formatValue(row.src_port)}` },
            { key: 'dst', label: 'Destination', render: (row) => `${row.dst_addr}:${formatValue(row.dst_port)}` },
            { key: 'state', label: 'State' },
            { key: 'bytes', label: 'Bytes', render: (row) => formatBytes(row.bytes_in + row.bytes_out) },
          ]}
        />
      </section>
    </div>
  );
}
