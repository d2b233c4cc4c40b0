import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { outboundFetch, type OutboundPolicy } from '../../net/outbound.js';
import { allowListOf } from '../../net/special-addresses.js';

export const PROVIDERS = ['openai', 'claude', 'lm_studio', 'ollama'] as const;
export type ProviderName = (typeof PROVIDERS)[number];

export const CLAUDE_MODELS = ['claude-sonnet-4-20250514', 'claude-opus-4-20250514', 'claude-haiku-4-20250414', 'claude-3-5-sonnet-20241022', 'claude-3-5-haiku-20241022'];

export interface ProviderTarget {
  provider: ProviderName;
  endpoint: string;
  model: string;
  apiKey?: string;
  allowList: string[];
}

const trimSlash = (url: string) => url.replace(/\/+$/, '');

/**
 * The outbound policy of a provider call: the admin allow-list admits LAN or loopback runtimes, and plain
 * http is allowed only to a destination on that list (a local Ollama), never to the Internet.
 */
async function policyFor(target: ProviderTarget): Promise<OutboundPolicy> {
  let allowHttp = false;
  const url = new URL(target.endpoint);
  if (url.protocol === 'http:' && target.allowList.length > 0) {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const addresses = isIP(host) ? [host] : (await lookup(host, { all: true }).catch(() => [])).map((a) => a.address);
    const list = allowListOf(target.allowList);
    allowHttp = addresses.length > 0 && addresses.every((address) => list.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4'));
  }
  return { allowList: target.allowList, allowHttp, timeoutMs: 120_000, maxRedirects: 0 };
}

function headers(target: ProviderTarget): Record<string, string> {
  const out: Record<string, string> = { 'content-type': 'application/json' };
  if (target.provider === 'claude') {
    if (target.apiKey) out['x-api-key'] = target.apiKey;
    out['anthropic-version'] = '2023-06-01';
  } else if (target.apiKey) {
    out.authorization = `Bearer ${target.apiKey}`;
  }
  return out;
}

/** Sends one prompt and answers the model's text. */
export async function complete(target: ProviderTarget, system: string, prompt: string): Promise<string> {
  const base = trimSlash(target.endpoint);
  const policy = await policyFor(target);
  let url: string;
  let body: unknown;
  if (target.provider === 'claude') {
    url = `${base}/v1/messages`;
    body = { model: target.model, max_tokens: 1024, system, messages: [{ role: 'user', content: prompt }] };
  } else if (target.provider === 'ollama') {
    url = `${base}/api/chat`;
    body = { model: target.model, stream: false, messages: [{ role: 'system', content: system }, { role: 'user', content: prompt }] };
  } else {
    url = `${base}/chat/completions`;
    body = { model: target.model, temperature: 0.1, max_tokens: 1024, messages: [{ role: 'system', content: system }, { role: 'user', content: prompt }] };
  }
  const response = await outboundFetch(url, { method: 'POST', headers: headers(target), body: JSON.stringify(body) }, policy);
  const text = await response.text();
  if (!response.ok) throw new Error(`provider answered HTTP ${response.status}`);
  let parsed: any;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error('provider answer is not JSON');
  }
  const content = target.provider === 'claude'
    ? parsed?.content?.find?.((block: { type: string }) => block.type === 'text')?.text
    : target.provider === 'ollama' ? parsed?.message?.content : parsed?.choices?.[0]?.message?.content;
  if (typeof content !== 'string') throw new Error('provider answer has no message text');
  return content;
}

/** Lists the models a provider offers (Claude: a fixed list). */
export async function listModels(target: ProviderTarget): Promise<string[]> {
  if (target.provider === 'claude') return CLAUDE_MODELS;
  const base = trimSlash(target.endpoint);
  const url = target.provider === 'ollama' ? `${base}/api/tags` : `${base}/models`;
  const response = await outboundFetch(url, { headers: headers(target) }, await policyFor(target));
  if (!response.ok) throw new Error(`provider answered HTTP ${response.status}`);
  const parsed = (await response.json()) as any;
  const items: unknown[] = target.provider === 'ollama' ? parsed?.models ?? [] : parsed?.data ?? [];
  return items.map((item: any) => String(target.provider === 'ollama' ? item?.name : item?.id)).filter((name) => name && name !== 'undefined');
}

/** Probes the provider's API with the given credentials: the HTTP status, or the reason it could not be reached. */
export async function probe(target: ProviderTarget): Promise<{ success: boolean; status_code: string; error?: string }> {
  const base = trimSlash(target.endpoint);
  const url = target.provider === 'ollama' ? `${base}/api/tags` : target.provider === 'claude' ? `${base}/v1/models` : `${base}/models`;
  try {
    const response = await outboundFetch(url, { headers: headers(target) }, await policyFor(target));
    await response.arrayBuffer();
    const ok = response.status >= 200 && response.status < 300;
    return { success: ok, status_code: String(response.status), ...(ok ? {} : { error: `provider answered HTTP ${response.status}` }) };
  } catch (error) {
    return { success: false, status_code: '000', error: (error as Error).message };
  }
}

/** Reads a verdict from model text: JSON {classification, reason} (after think blocks and fences), else keywords. */
export function parseVerdict(text: string): { classification: 'confirmed' | 'false_positive' | 'investigating'; reason: string } {
  const cleaned = text.replace(/<think>[\s\S]*?<\/think>/g, '').replace(/```(?:json)?/g, '').trim();
  const allowed = ['confirmed', 'false_positive', 'investigating'] as const;
  const json = /\{[\s\S]*\}/.exec(cleaned)?.[0];
  if (json) {
    try {
      const parsed = JSON.parse(json) as { classification?: string; reason?: string };
      const value = String(parsed.classification ?? '').toLowerCase() as (typeof allowed)[number];
      return { classification: allowed.includes(value) ? value : 'investigating', reason: String(parsed.reason ?? '').slice(0, 300) };
    } catch {
      // fall through to keywords
    }
  }
  const lower = cleaned.toLowerCase();
  const classification = /false[_ ]positive|benign/.test(lower) ? 'false_positive' : /confirmed|malicious|true positive/.test(lower) ? 'confirmed' : 'investigating';
  return { classification, reason: cleaned.slice(0, 300) };
}
