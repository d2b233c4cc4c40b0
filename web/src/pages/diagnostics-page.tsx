import { useEffect, useRef, useState } from 'preact/hooks';
import { useSession } from '../auth/session-context';
import { ApiError } from '../api/client';
import { useFocusInvalid } from '../components/use-submit';
import { ErrorAlert, Notice, messageOf } from '../components/error-alert';
import { FormActions, SelectField, TextField } from '../components/fields';
import { Page } from '../components/page';
import { CollectionSection } from '../components/collection-section';
import { formatBytes, formatDuration } from '../components/format';

/** docs/diagnostics.md: the probes stream their output; the capture answers a pcap file to download. */
const TOOLS = [
  { value: 'ping', label: 'Ping' },
  { value: 'traceroute', label: 'Traceroute' },
  { value: 'dns', label: 'DNS lookup' },
  { value: 'tcp', label: 'TCP port test' },
  { value: 'capture', label: 'Packet capture' },
] as const;
type Tool = (typeof TOOLS)[number]['value'];

const RUN_PERMISSION = 'interfaces:write';
const DNS_TYPES = ['A', 'AAAA', 'CNAME', 'MX', 'NS', 'PTR', 'SOA', 'SRV', 'TXT', 'CAA'];
const PROTOCOLS = ['any', 'tcp', 'udp', 'icmp', 'icmp6', 'arp'];

/** Number fields are sent as numbers; an empty optional field is left out (the API's default applies). */
function bodyOf(tool: Tool, v: Record<string, string>): Record<string, unknown> {
  const number = (key: string) => (v[key] ? Number(v[key]) : undefined);
  const text = (key: string) => v[key] || undefined;
  switch (tool) {
    case 'ping': return { host: v.host, count: number('count'), interface: text('interface') };
    case 'traceroute': return { host: v.host, max_hops: number('max_hops') };
    case 'dns': return { name: v.name, type: v.type, server: text('server') };
    case 'tcp': return { host: v.host, port: number('port') };
    case 'capture': return { interface: v.interface, protocol: v.protocol, host: text('host'), port: number('port'), duration_s: number('duration_s'), max_bytes: number('max_kib') === undefined ? undefined : number('max_kib')! * 1024 };
  }
}

export function DiagnosticsPage() {
  const { api, can } = useSession();
  const mayRun = can(RUN_PERMISSION);
  const [tool, setTool] = useState<Tool>('ping');
  const [values, setValues] = useState<Record<string, string>>({ host: '', count: '4', max_hops: '20', name: '', type: 'A', server: '', port: '', interface: '', protocol: 'any', duration_s: '10', max_kib: '1024' });
  const [lines, setLines] = useState<string[]>([]);
  const [status, setStatus] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  // a 400 naming one of the form's fields is shown at it (`body.host: …`)
  const [errorField, setErrorField] = useState<string | null>(null);
  const form = useRef<HTMLFormElement>(null);
  useFocusInvalid(form, errorField && error);
  const [running, setRunning] = useState(false);
  const [download, setDownload] = useState<{ url: string; name: string; packets: string } | null>(null);
  const abort = useRef<AbortController | null>(null);

  useEffect(() => () => {
    abort.current?.abort();
    if (download) URL.revokeObjectURL(download.url);
  }, [download]);

  const set = (key: string) => (value: string) => setValues((current) => ({ ...current, [key]: value }));
  const field = (key: string, label: string, hint?: string, type: 'text' | 'number' = 'text', required = false) => (
    <TextField label={label} name={key} value={values[key]} onInput={set(key)} hint={hint} type={type} required={required} inputMode={type === 'number' ? 'numeric' : undefined} error={errorField === key ? error : null} />
  );

  const run = async (event: Event) => {
    event.preventDefault();
    setError(null);
    setErrorField(null);
    setLines([]);
    setDownload(null);
    setRunning(true);
    const body = bodyOf(tool, values);
    try {
      if (tool === 'capture') {
        setStatus(`Capturing on ${values.interface} for up to ${values.duration_s} s…`);
        const { blob, headers } = await api.postBlob('/diagnostics/capture', body);
        const name = /filename="([^"]+)"/.exec(headers.get('content-disposition') ?? '')?.[1] ?? 'capture.pcap';
        setDownload({ url: URL.createObjectURL(blob), name, packets: headers.get('x-capture-packets') ?? '?' });
        setStatus(`Capture ended (${headers.get('x-capture-ended-by') ?? 'done'}): ${headers.get('x-capture-packets') ?? '?'} packets, ${blob.size} bytes.`);
      } else {
        setStatus('Running…');
        abort.current = new AbortController();
        await api.postStream(`/diagnostics/${tool}`, body, (name, data) => {
          const d = data as Record<string, unknown>;
          if (name === 'start') setLines([`$ ${(d.command as string[]).join(' ')}`]);
          else if (name === 'line') setLines((current) => [...current, String(d.text)]);
          else if (name === 'exit') setStatus(d.timed_out ? 'Stopped at its time limit.' : `Finished (exit code ${String(d.exit_code)}).`);
          else if (name === 'error' || name === 'end') setError(String(d.error));
        }, abort.current.signal);
      }
    } catch (failure) {
      setStatus(null);
      if ((failure as Error).name === 'AbortError') setStatus('Stopped.');
      else {
        const named = failure instanceof ApiError ? failure.fieldPath?.[0] : undefined;
        setErrorField(named && form.current?.querySelector(`[name="${named}"]`) ? named : null);
        setError(messageOf(failure));
      }
    } finally {
      setRunning(false);
      abort.current = null;
    }
  };

  return (
    <Page title="Diagnostics" help="Ping, traceroute, DNS lookup, TCP port test and packet capture, run from the appliance as an unprivileged user.">
      {!mayRun && <Notice>Running diagnostics needs the permission {RUN_PERMISSION}.</Notice>}
      {mayRun && (
        <section aria-labelledby="diagnostics-run">
          <h2 id="diagnostics-run">Run</h2>
          <form onSubmit={run} ref={form}>
            <SelectField label="Tool" name="tool" value={tool} options={TOOLS} onChange={(value) => setTool(value as Tool)} />
            {(tool === 'ping' || tool === 'traceroute' || tool === 'tcp') && field('host', 'Host', 'A host name or an IP address', 'text', true)}
            {tool === 'ping' && field('count', 'Count', 'Echo requests, one a second (1-20)', 'number')}
            {tool === 'ping' && field('interface', 'Interface', 'Optional: send from this interface')}
            {tool === 'traceroute' && field('max_hops', 'Maximum hops', '1-30', 'number')}
            {tool === 'dns' && field('name', 'Name', 'For PTR, an IP address', 'text', true)}
            {tool === 'dns' && <SelectField label="Record type" name="type" value={values.type} options={DNS_TYPES} onChange={set('type')} />}
            {tool === 'dns' && field('server', 'Server', "Optional: a name server to ask; empty: the appliance's resolver")}
            {tool === 'tcp' && field('port', 'Port', '1-65535', 'number', true)}
            {tool === 'capture' && field('interface', 'Interface', 'The interface to capture on', 'text', true)}
            {tool === 'capture' && <SelectField label="Protocol" name="protocol" value={values.protocol} options={PROTOCOLS} onChange={set('protocol')} />}
            {tool === 'capture' && field('host', 'Host address', 'Optional: only packets from or to this IP address')}
            {tool === 'capture' && field('port', 'Port', 'Optional: only this port (tcp, udp or any)', 'number')}
            {tool === 'capture' && field('duration_s', 'Duration (seconds)', '1-60', 'number')}
            {tool === 'capture' && field('max_kib', 'Size cap (KiB)', 'The capture ends before the file would exceed it (at most 10240)', 'number')}
            <FormActions>
              <button type="submit" disabled={running}>Run</button>
              {running && tool !== 'capture' && <button type="button" class="secondary" onClick={() => abort.current?.abort()}>Stop</button>}
            </FormActions>
          </form>
          <ErrorAlert message={errorField ? null : error} />
          {status && <Notice>{status}</Notice>}
          {download && (
            <p>
              <a href={download.url} download={download.name}>Download {download.name} ({download.packets} packets)</a>
            </p>
          )}
          {lines.length > 0 && (
            <pre class="output" role="log" aria-label="Output" tabIndex={0}>{lines.join('\n')}</pre>
          )}
        </section>
      )}
      <CollectionSection
        title="Open connections"
        path="/connections"
        empty="No connections."
        columns={[
          { key: 'protocol', label: 'Protocol' },
          { key: 'src_addr', label: 'Source', render: (row) => `${String(row.src_addr)}${row.src_port ? `:${String(row.src_port)}` : ''}` },
          { key: 'dst_addr', label: 'Destination', render: (row) => `${String(row.dst_addr)}${row.dst_port ? `:${String(row.dst_port)}` : ''}` },
          { key: 'state', label: 'State' },
          { key: 'bytes_in', label: 'In', render: (row) => formatBytes(row.bytes_in as number) },
          { key: 'bytes_out', label: 'Out', render: (row) => formatBytes(row.bytes_out as number) },
          { key: 'age_secs', label: 'Age', render: (row) => formatDuration(row.age_secs as number) },
        ]}
      />
    </Page>
  );
}
