import { useEffect, useRef, useState } from 'preact/hooks';
import type { Rule } from '../api/types';
import { ErrorAlert } from '../components/error-alert';
import { useFocusInvalid, useSubmit } from '../components/use-submit';
import { CheckboxField, FormActions, SelectField, TextField } from '../components/fields';

const ACTIONS = [
  { value: 'pass', label: 'pass' },
  { value: 'block', label: 'block' },
  { value: 'block_drop', label: 'block (drop)' },
  { value: 'block_return', label: 'block (return)' },
];
const DIRECTIONS = ['in', 'out', 'any'];
const PROTOCOLS = ['tcp', 'udp', 'tcp/udp', 'icmp', 'icmp6', 'esp', 'ah', 'gre', 'any'];
const IP_VERSIONS = [
  { value: 'both', label: 'IPv4 and IPv6' },
  { value: 'inet', label: 'IPv4' },
  { value: 'inet6', label: 'IPv6' },
];
const STATUSES = ['active', 'disabled'];

export interface RuleDraft {
  action: string;
  direction: string;
  protocol: string;
  ip_version: string;
  interface: string;
  src_addr: string;
  src_port_start: string;
  src_port_end: string;
  dst_addr: string;
  dst_port_start: string;
  dst_port_end: string;
  log: boolean;
  label: string;
  description: string;
  status: string;
}

function draftOf(rule: Rule | null): RuleDraft {
  const port = (value: number | undefined) => (value === undefined ? '' : String(value));
  return {
    action: rule?.action.replace(/^block(drop|return)$/, 'block_$1') ?? 'pass',
    direction: rule?.direction ?? 'in',
    protocol: rule?.protocol ?? 'tcp',
    ip_version: rule?.ip_version ?? 'both',
    interface: rule?.interface ?? '',
    src_addr: rule?.rule_match.src_addr ?? 'any',
    src_port_start: port(rule?.rule_match.src_port?.start),
    src_port_end: port(rule?.rule_match.src_port?.end),
    dst_addr: rule?.rule_match.dst_addr ?? 'any',
    dst_port_start: port(rule?.rule_match.dst_port?.start),
    dst_port_end: port(rule?.rule_match.dst_port?.end),
    log: rule?.log ?? false,
    label: rule?.label ?? '',
    description: rule?.description ?? '',
    status: rule?.status ?? 'active',
  };
}

/**
 * The request in the API's flat form. A port typed as text stays text when it is not a number, so the API's
 * own message names the field; an empty "to" means a single port; empty optional fields are null (cleared).
 */
function bodyOf(draft: RuleDraft, editing: boolean): Record<string, unknown> {
  const port = (value: string) => (value.trim() === '' ? null : /^\d+$/.test(value.trim()) ? Number(value.trim()) : value.trim());
  const range = (start: string, end: string) => ({ start: port(start), end: port(end.trim() === '' ? start : end) });
  const src = range(draft.src_port_start, draft.src_port_end);
  const dst = range(draft.dst_port_start, draft.dst_port_end);
  const text = (value: string) => (value.trim() === '' ? null : value.trim());
  return {
    action: draft.action,
    direction: draft.direction,
    protocol: draft.protocol,
    ip_version: draft.ip_version,
    interface: text(draft.interface),
    src_addr: text(draft.src_addr) ?? 'any',
    src_port_start: src.start,
    src_port_end: src.end,
    dst_addr: text(draft.dst_addr) ?? 'any',
    dst_port_start: dst.start,
    dst_port_end: dst.end,
    log: draft.log,
    label: text(draft.label),
    description: text(draft.description),
    ...(editing ? { status: draft.status } : {}),
  };
}

interface RuleFormProps {
  rule: Rule | null;
  /** A new rule's fields filled in beforehand (the logs page's "Create a rule from this"). */
  initial?: Partial<RuleDraft>;
  onSubmit(body: Record<string, unknown>): Promise<void>;
  onCancel(): void;
  /** The submit button's text when the form does not save at once (the change-set screen stages the edit). */
  submitLabel?: string;
}

/** Create or edit a rule; the API validates and its 400 (naming the field) is shown as it is. */
export function RuleForm({ rule, initial, onSubmit, onCancel, submitLabel }: RuleFormProps) {
  const [draft, setDraft] = useState<RuleDraft>(() => ({ ...draftOf(rule), ...initial }));
  // a new read of the rule (after a save refused as stale) shows what is stored now (not on mount: that would
  // race the first keystrokes)
  const shownRule = useRef(rule);
  useEffect(() => {
    if (shownRule.current === rule) return;
    shownRule.current = rule;
    setDraft(draftOf(rule));
  }, [rule]);
  const set = <K extends keyof RuleDraft>(key: K) => (value: RuleDraft[K]) => setDraft((current) => ({ ...current, [key]: value }));
  const title = rule ? 'Edit rule' : 'New rule';

  const { busy, error, errorPath, submit } = useSubmit(() => onSubmit(bodyOf(draft, rule !== null)));
  // a 400 names the field as sent (src_port_start) or as the rule holds it (src_port): shown at its input
  const named = errorPath?.[0]?.replace(/^(src|dst)_port$/, '$1_port_start');
  const at = named && named in draft && (named !== 'status' || rule) ? named : undefined;
  const errorAt = (name: keyof RuleDraft) => (name === at ? error : null);
  const form = useRef<HTMLFormElement>(null);
  useFocusInvalid(form, error);

  return (
    <form class="record-form" onSubmit={submit} aria-label={title} ref={form}>
      <h3>{title}</h3>
      <div class="form-grid">
        <SelectField label="Action" name="action" value={draft.action} options={ACTIONS} onChange={set('action')} error={errorAt('action')} />
        <SelectField label="Direction" name="direction" value={draft.direction} options={DIRECTIONS} onChange={set('direction')} error={errorAt('direction')} />
        <SelectField label="Protocol" name="protocol" value={draft.protocol} options={PROTOCOLS} onChange={set('protocol')} error={errorAt('protocol')} />
        <SelectField label="IP version" name="ip_version" value={draft.ip_version} options={IP_VERSIONS} onChange={set('ip_version')} error={errorAt('ip_version')} />
        <TextField label="Interface" name="interface" value={draft.interface} onInput={set('interface')} hint="empty: all interfaces" error={errorAt('interface')} />
        <TextField label="Source address" name="src_addr" value={draft.src_addr} onInput={set('src_addr')} hint="any, an address, a CIDR, a range or <alias>" error={errorAt('src_addr')} />
        <TextField label="Source port" name="src_port_start" value={draft.src_port_start} onInput={set('src_port_start')} inputMode="numeric" error={errorAt('src_port_start')} />
        <TextField label="Source port to" name="src_port_end" value={draft.src_port_end} onInput={set('src_port_end')} inputMode="numeric" hint="empty: one port" error={errorAt('src_port_end')} />
        <TextField label="Destination address" name="dst_addr" value={draft.dst_addr} onInput={set('dst_addr')} hint="any, an address, a CIDR, a range or <alias>" error={errorAt('dst_addr')} />
        <TextField label="Destination port" name="dst_port_start" value={draft.dst_port_start} onInput={set('dst_port_start')} inputMode="numeric" error={errorAt('dst_port_start')} />
        <TextField label="Destination port to" name="dst_port_end" value={draft.dst_port_end} onInput={set('dst_port_end')} inputMode="numeric" hint="empty: one port" error={errorAt('dst_port_end')} />
        <TextField label="Description" name="description" value={draft.description} onInput={set('description')} error={errorAt('description')} />
        <TextField label="Label" name="label" value={draft.label} onInput={set('label')} hint="shown in logs and counters" error={errorAt('label')} />
        {rule && <SelectField label="Status" name="status" value={draft.status} options={STATUSES} onChange={set('status')} error={errorAt('status')} />}
        <CheckboxField label="Log matching packets" name="log" checked={draft.log} onChange={set('log')} error={errorAt('log')} />
      </div>
      <ErrorAlert message={at ? null : error} />
      <FormActions>
        <button type="submit" disabled={busy}>
          {submitLabel ?? (rule ? 'Save rule' : 'Create rule')}
        </button>
        <button type="button" class="secondary" onClick={onCancel}>
          Cancel
        </button>
      </FormActions>
    </form>
  );
}
