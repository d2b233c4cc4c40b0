import { useState } from 'preact/hooks';
import type { ApiClient } from '../api/client';
import { ErrorAlert } from '../components/error-alert';
import { FormActions, SelectField, TextField } from '../components/fields';
import { useSubmit } from '../components/use-submit';

type Endpoints = { src: string; src_port: number | null; dst: string; dst_port: number | null };

/** POST /rules/simulate's answer (docs/packet-filter.md). */
export interface Simulation {
  verdict: 'pass' | 'block';
  action: string;
  decided_by: { type: 'rule'; rule_id: string; quick: boolean } | { type: 'system'; rule: string } | { type: 'default'; policy: 'pass' | 'block' };
  ruleset: 'applied' | 'stored';
  local_time: string;
  nat: { rule_id: string; nat_type: string; before: Endpoints; after: Endpoints; changed: string[] } | null;
  filtered: Endpoints;
  rules: { rule_id: string; outcome: string; reason: string; matched_on?: string[] }[];
}

const PROTOCOLS = ['tcp', 'udp', 'icmp', 'icmp6', 'esp', 'ah', 'gre'];
const RULESETS = [
  { value: 'applied', label: 'Applied (what the firewall enforces)' },
  { value: 'stored', label: 'Stored (with pending changes)' },
];

interface PacketDraft {
  interface: string;
  direction: string;
  protocol: string;
  src: string;
  src_port: string;
  dst: string;
  dst_port: string;
  ruleset: string;
  at: string;
}

const EMPTY: PacketDraft = { interface: '', direction: 'in', protocol: 'tcp', src: '', src_port: '', dst: '', dst_port: '', ruleset: 'applied', at: '' };

/** The request as the API takes it; a port that is not a number is sent as typed, so the API's 400 names it. */
function bodyOf(draft: PacketDraft): Record<string, unknown> {
  const port = (value: string) => (value.trim() === '' ? null : /^\d+$/.test(value.trim()) ? Number(value.trim()) : value.trim());
  return {
    interface: draft.interface.trim(),
    direction: draft.direction,
    protocol: draft.protocol,
    src: draft.src.trim(),
    dst: draft.dst.trim(),
    src_port: port(draft.src_port),
    dst_port: port(draft.dst_port),
    ruleset: draft.ruleset,
    ...(draft.at.trim() ? { at: draft.at.trim() } : {}),
  };
}

/** The fields a 400 may name, each shown under its input. */
const FIELDS = ['interface', 'src', 'src_port', 'dst', 'dst_port', 'at'];

const endpoint = (address: string, port: number | null) => (port === null ? address : address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`);

/** What decided, in words; `ruleName` names a rule as the table does (#3 "web server"). */
export function decidedBy(result: Simulation, ruleName: (id: string) => string): string {
  const by = result.decided_by;
  if (by.type === 'rule') return `rule ${ruleName(by.rule_id)}`;
  if (by.type === 'system') return `the system rule "${by.rule}"`;
  return by.policy === 'block' ? 'the default policy: block (the WAN default block)' : 'the default policy: pass (no rule matched)';
}

/**
 * "Would this packet pass?": POST /rules/simulate with the packet, and its verdict, what decided it (that rule is
 * highlighted in the table by the page), why, and the NAT that applied. Reading rules suffices (rules:read).
 */
export function PacketTest({ api, ruleName, onResult }: { api: ApiClient; ruleName(id: string): string; onResult(result: Simulation | null): void }) {
  const [draft, setDraft] = useState<PacketDraft>(EMPTY);
  const [result, setResult] = useState<Simulation | null>(null);
  const set = <K extends keyof PacketDraft>(key: K) => (value: PacketDraft[K]) => setDraft((current) => ({ ...current, [key]: value }));
  const { busy, error, submit } = useSubmit(async () => {
    setResult(null);
    onResult(null);
    const answer = await api.request<Simulation>('POST', '/rules/simulate', { body: bodyOf(draft), changesNothing: true });
    setResult(answer.data);
    onResult(answer.data);
  });
  // A 400 naming a field (`body.src_port is required…`) is shown at that field; anything else above the button.
  const fieldOf = error?.match(/^body\.(\w+)/)?.[1];
  const at = (field: string) => (fieldOf === field ? error : null);
  const deciding = result?.decided_by.type === 'rule' ? result.rules.find((entry) => entry.outcome === 'decides') : undefined;

  return (
    <section class="panel" aria-labelledby="packet-test-title">
      <h2 id="packet-test-title">Test a packet</h2>
      <form onSubmit={submit} aria-label="Test a packet">
        <div class="form-grid">
          <TextField label="Interface" name="interface" value={draft.interface} onInput={set('interface')} error={at('interface')} required hint="the interface the packet crosses, e.g. eth0" />
          <SelectField label="Direction" name="direction" value={draft.direction} options={[{ value: 'in', label: 'in (entering)' }, { value: 'out', label: 'out (leaving)' }]} onChange={set('direction')} />
          <SelectField label="Protocol" name="protocol" value={draft.protocol} options={PROTOCOLS} onChange={set('protocol')} />
          <TextField label="Source address" name="src" value={draft.src} onInput={set('src')} error={at('src')} required />
          <TextField label="Source port" name="src_port" value={draft.src_port} onInput={set('src_port')} error={at('src_port')} inputMode="numeric" hint="tcp and udp only" />
          <TextField label="Destination address" name="dst" value={draft.dst} onInput={set('dst')} error={at('dst')} required />
          <TextField label="Destination port" name="dst_port" value={draft.dst_port} onInput={set('dst_port')} error={at('dst_port')} inputMode="numeric" hint="tcp and udp only" />
          <SelectField label="Ruleset" name="ruleset" value={draft.ruleset} options={RULESETS} onChange={set('ruleset')} />
          <TextField label="At" name="at" value={draft.at} onInput={set('at')} error={at('at')} hint="RFC 3339 time for schedules; empty: now" />
        </div>
        <ErrorAlert message={fieldOf && FIELDS.includes(fieldOf) ? null : error} />
        <FormActions>
          <button type="submit" disabled={busy}>
            Test
          </button>
        </FormActions>
      </form>
      {result && (
        <div class="simulation" role="status" aria-label="Verdict">
          <p class={`verdict ${result.verdict}`}>
            {result.verdict === 'pass' ? 'Passes' : `Blocked (${result.action})`}, decided by {decidedBy(result, ruleName)}.
          </p>
          {deciding?.matched_on && (
            <ul class="matched-on">
              {deciding.matched_on.map((line) => (
                <li key={line}>{line}</li>
              ))}
            </ul>
          )}
          <p class="help">
            {result.nat
              ? `NAT (${result.nat.nat_type}): ${endpoint(result.nat.before.src, result.nat.before.src_port)} → ${endpoint(result.nat.before.dst, result.nat.before.dst_port)} becomes ${endpoint(result.nat.after.src, result.nat.after.src_port)} → ${endpoint(result.nat.after.dst, result.nat.after.dst_port)} (${result.nat.changed.join(', ')} changed); the rules saw the translated packet.`
              : 'No NAT rule applied.'}{' '}
            Judged on the {result.ruleset} ruleset at {result.local_time}.
          </p>
        </div>
      )}
    </section>
  );
}
