import type { FlowState } from '../../platform/routing.js';

/** Behavioural findings of the local detectors (no provider needed). */
export interface Detection {
  threat_type: 'port_scan' | 'brute_force' | 'ddos' | 'c2_beacon' | 'signature_match';
  source: string;
  target: string | null;
  /** 0–1; ≥0.9 critical, ≥0.7 high, ≥0.4 medium, else low. */
  score: number;
  severity: 'critical' | 'high' | 'medium' | 'low';
  evidence: string;
}

export interface AlertSample {
  src_ip: string;
  dst_ip: string;
  dst_port: number | null;
  severity: number;
  signature_msg: string;
}

const AUTH_PORTS = new Set([21, 22, 23, 25, 110, 143, 389, 445, 465, 587, 993, 995, 1433, 3306, 3389, 5432, 5900]);
const FAILED_STATES = new Set(['SYN_SENT', 'SYN_RECV', 'CLOSE', 'CLOSED', 'UNREPLIED', 'TIME_WAIT', 'LAST_ACK', 'FIN_WAIT']);

const split = (endpoint: string) => {
  const match = /^\[?([^\]]+?)\]?:(\d+)$/.exec(endpoint);
  return match ? { ip: match[1], port: Number(match[2]) } : { ip: endpoint, port: 0 };
};
const severityOf = (score: number): Detection['severity'] => (score >= 0.9 ? 'critical' : score >= 0.7 ? 'high' : score >= 0.4 ? 'medium' : 'low');
const clamp = (value: number) => Math.round(Math.min(1, Math.max(0, value)) * 100) / 100;

/** A connection that never completed: a half-open or reset TCP state, or a TCP flow of at most two packets. */
export const failed = (flow: FlowState): boolean =>
  (flow.state !== null && FAILED_STATES.has(flow.state.toUpperCase())) || (flow.protocol === 'tcp' && flow.packets <= 2 && flow.state?.toUpperCase() !== 'ESTABLISHED');

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = groups.get(k);
    if (list) list.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}

/** ≥15 distinct destination ports from one source with ≥60 % failed connections. */
export function detectPortScans(flows: FlowState[]): Detection[] {
  const out: Detection[] = [];
  for (const [source, list] of groupBy(flows, (f) => split(f.src).ip)) {
    const ports = new Set(list.map((f) => `${split(f.dst).ip}:${split(f.dst).port}`));
    const failures = list.filter(failed).length / list.length;
    if (ports.size >= 15 && failures >= 0.6) {
      const score = clamp(0.5 + ports.size / 200 + (failures - 0.6));
      const targets = new Set(list.map((f) => split(f.dst).ip));
      out.push({ threat_type: 'port_scan', source, target: targets.size === 1 ? [...targets][0] : null, score, severity: severityOf(score), evidence: `${ports.size} destination ports, ${Math.round(failures * 100)}% failed` });
    }
  }
  return out;
}

/** ≥10 connections from one source to one authentication service with ≥70 % failed or short-lived. */
export function detectBruteForce(flows: FlowState[]): Detection[] {
  const out: Detection[] = [];
  const auth = flows.filter((f) => AUTH_PORTS.has(split(f.dst).port));
  for (const [key, list] of groupBy(auth, (f) => `${split(f.src).ip}>${f.dst}`)) {
    const unsuccessful = list.filter((f) => failed(f) || (f.age_secs < 10 && f.bytes < 8192)).length / list.length;
    if (list.length >= 10 && unsuccessful >= 0.7) {
      const score = clamp(0.55 + list.length / 100 + (unsuccessful - 0.7));
      out.push({ threat_type: 'brute_force', source: key.split('>')[0], target: list[0].dst, score, severity: severityOf(score), evidence: `${list.length} connections to ${list[0].dst}, ${Math.round(unsuccessful * 100)}% failed or short` });
    }
  }
  return out;
}

/** Floods: >50 new connections per second to one destination, or >100 SYNs with >80 % unanswered. */
export function detectFloods(flows: FlowState[], windowSecs = 10): Detection[] {
  const out: Detection[] = [];
  for (const [target, list] of groupBy(flows, (f) => split(f.dst).ip)) {
    const recent = list.filter((f) => f.age_secs <= windowSecs);
    const rate = recent.length / windowSecs;
    const syns = list.filter((f) => f.protocol === 'tcp');
    const synFailures = syns.length ? syns.filter(failed).length / syns.length : 0;
    if (rate > 50 || (syns.length > 100 && synFailures > 0.8)) {
      const sources = new Set(list.map((f) => split(f.src).ip));
      const score = clamp(0.6 + rate / 500 + (synFailures > 0.8 ? 0.2 : 0));
      out.push({ threat_type: 'ddos', source: sources.size === 1 ? [...sources][0] : `${sources.size} sources`, target, score, severity: severityOf(score), evidence: `${recent.length} connections in ${windowSecs}s (${rate.toFixed(1)}/s), ${syns.length} TCP of which ${Math.round(synFailures * 100)}% unanswered` });
    }
  }
  return out;
}

/** Beaconing: ≥5 connections from one source to one service at regular intervals (variance ≤5 s²). */
export function detectBeacons(flows: FlowState[]): Detection[] {
  const out: Detection[] = [];
  for (const [key, list] of groupBy(flows, (f) => `${split(f.src).ip}>${f.dst}`)) {
    if (list.length < 5) continue;
    const starts = list.map((f) => -f.age_secs).sort((a, b) => a - b);
    const intervals = starts.slice(1).map((s, i) => s - starts[i]);
    const mean = intervals.reduce((a, b) => a + b, 0) / intervals.length;
    const variance = intervals.reduce((a, b) => a + (b - mean) ** 2, 0) / intervals.length;
    if (mean >= 1 && variance <= 5) {
      const score = clamp(0.5 + list.length / 50 + (5 - variance) / 25);
      out.push({ threat_type: 'c2_beacon', source: key.split('>')[0], target: list[0].dst, score, severity: severityOf(score), evidence: `${list.length} connections every ${mean.toFixed(1)}s (variance ${variance.toFixed(2)})` });
    }
  }
  return out;
}

/** From IDS alerts: port scans (≥15 distinct destination ports per source) and repeated high-severity matches. */
export function detectFromAlerts(alerts: AlertSample[]): Detection[] {
  const out: Detection[] = [];
  for (const [source, list] of groupBy(alerts, (a) => a.src_ip)) {
    const ports = new Set(list.filter((a) => a.dst_port !== null).map((a) => `${a.dst_ip}:${a.dst_port}`));
    if (ports.size >= 15) {
      const score = clamp(0.5 + ports.size / 200);
      out.push({ threat_type: 'port_scan', source, target: null, score, severity: severityOf(score), evidence: `IDS alerts on ${ports.size} destination ports` });
    }
    const serious = list.filter((a) => a.severity <= 2);
    if (serious.length >= 5) {
      const score = clamp(0.6 + serious.length / 100 + (serious.some((a) => a.severity === 1) ? 0.2 : 0));
      out.push({ threat_type: 'signature_match', source, target: null, score, severity: severityOf(score), evidence: `${serious.length} high-severity IDS alerts, e.g. "${serious[0].signature_msg}"` });
    }
  }
  return out;
}

export function runDetectors(flows: FlowState[], alerts: AlertSample[]): Detection[] {
  return [...detectPortScans(flows), ...detectBruteForce(flows), ...detectFloods(flows), ...detectBeacons(flows), ...detectFromAlerts(alerts)]
    .sort((a, b) => b.score - a.score);
}
