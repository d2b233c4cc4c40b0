/**
 * Router rules are written in the model's (Traefik-compatible) rule language — ``Host(`a.example`) &&
 * PathPrefix(`/api`)`` — and rendered for Caddy as matcher sets. This file parses a rule into an expression,
 * rewrites it as an OR of ANDs (Caddy's route `match` is a list of matcher sets that are OR'ed; the matchers of
 * one set are AND'ed; `not` holds sets of its own) and refuses what Caddy's core matchers cannot say.
 */
import { isCidr, isHostName, isIpAddress } from '../grammar.js';

/** A rule Caddy cannot express, or one that does not parse: the message names the construct. */
export class RuleRefusal extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RuleRefusal';
  }
}

type Literal = { name: 'Host' | 'Path' | 'PathPrefix' | 'Method' | 'Headers' | 'Query' | 'ClientIP'; args: string[]; negated: boolean };
type Expression = { op: 'and' | 'or'; items: Expression[] } | { op: 'not'; item: Expression } | { op: 'call'; name: string; args: string[] };

const SUPPORTED = new Set(['Host', 'Path', 'PathPrefix', 'Method', 'Headers', 'Query', 'ClientIP']);
const ARITY: Record<string, [number, number]> = { Host: [1, 64], Path: [1, 64], PathPrefix: [1, 64], Method: [1, 16], Headers: [2, 2], Query: [1, 16], ClientIP: [1, 64] };
/** A rule that expands into more than this many matcher sets is refused (the OR of ANDs grows with every `||`). */
const MAX_SETS = 64;

function tokenize(rule: string): string[] {
  const tokens: string[] = [];
  let index = 0;
  while (index < rule.length) {
    const char = rule[index];
    if (/\s/.test(char)) {
      index++;
    } else if (rule.startsWith('&&', index) || rule.startsWith('||', index)) {
      tokens.push(rule.slice(index, index + 2));
      index += 2;
    } else if ('()!,'.includes(char)) {
      tokens.push(char);
      index++;
    } else if (char === '`' || char === '"') {
      const end = rule.indexOf(char, index + 1);
      if (end < 0) throw new RuleRefusal(`rule has an unterminated ${char === '`' ? 'backquoted' : 'quoted'} value`);
      tokens.push(`'${rule.slice(index + 1, end)}`); // a leading ' marks a value token
      index = end + 1;
    } else {
      const match = /^[A-Za-z][A-Za-z0-9]*/.exec(rule.slice(index));
      if (!match) throw new RuleRefusal(`rule has an unexpected character at position ${index + 1}`);
      tokens.push(match[0]);
      index += match[0].length;
    }
  }
  return tokens;
}

function parse(rule: string): Expression {
  const tokens = tokenize(rule);
  let position = 0;
  const peek = () => tokens[position];
  const expect = (token: string) => {
    if (tokens[position] !== token) throw new RuleRefusal(`rule expects "${token}" at token ${position + 1}`);
    position++;
  };
  const binary = (op: 'and' | 'or', token: string, next: () => Expression): Expression => {
    const items = [next()];
    while (peek() === token) {
      position++;
      items.push(next());
    }
    return items.length === 1 ? items[0] : { op, items };
  };
  const unary = (): Expression => {
    const token = peek();
    if (token === '!') {
      position++;
      return { op: 'not', item: unary() };
    }
    if (token === '(') {
      position++;
      const inner = or();
      expect(')');
      return inner;
    }
    if (!token || !/^[A-Za-z]/.test(token)) throw new RuleRefusal('rule expects a matcher such as Host(`example.org`)');
    position++;
    expect('(');
    const args: string[] = [];
    while (peek()?.startsWith("'")) {
      args.push(peek()!.slice(1));
      position++;
      if (peek() !== ',') break;
      position++;
    }
    expect(')');
    return { op: 'call', name: token, args };
  };
  const and = () => binary('and', '&&', unary);
  const or = (): Expression => binary('or', '||', and);
  if (tokens.length === 0) throw new RuleRefusal('rule is empty');
  const expression = or();
  if (position !== tokens.length) throw new RuleRefusal(`rule has unexpected "${tokens[position].replace(/^'/, '')}" at token ${position + 1}`);
  return expression;
}

/** OR of ANDs, negations pushed down to the matchers (De Morgan). */
function disjunctive(expression: Expression, negated = false): Literal[][] {
  if (expression.op === 'not') return disjunctive(expression.item, !negated);
  if (expression.op === 'call') {
    if (!SUPPORTED.has(expression.name)) throw new RuleRefusal(`rule matcher ${expression.name} is not supported by Caddy's core matchers (supported: ${[...SUPPORTED].join(', ')})`);
    const [min, max] = ARITY[expression.name];
    if (expression.args.length < min || expression.args.length > max) throw new RuleRefusal(`rule matcher ${expression.name} takes ${min === max ? min : `${min} to ${max}`} value(s)`);
    return [[{ name: expression.name as Literal['name'], args: expression.args, negated }]];
  }
  const parts = expression.items.map((item) => disjunctive(item, negated));
  const isOr = (expression.op === 'or') !== negated;
  if (isOr) return parts.flat();
  let product: Literal[][] = [[]];
  for (const part of parts) {
    product = product.flatMap((left) => part.map((right) => [...left, ...right]));
    if (product.length > MAX_SETS) throw new RuleRefusal(`rule expands into more than ${MAX_SETS} alternatives`);
  }
  return product;
}

const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_|~-]{1,128}$/;
const METHOD = /^[A-Z]{1,20}$/;

/** A value Caddy compares literally: no placeholder braces, no wildcard, no control character. */
function literalValue(value: string, what: string): string {
  if (/[{}*\u0000-\u001f\u007f]/.test(value) || value.length > 1024) throw new RuleRefusal(`rule ${what} "${value.slice(0, 64)}" must not contain {, }, * or control characters`);
  return value;
}

export type CaddyMatcherSet = Record<string, unknown>;

function matcherOf(literal: Literal): [string, unknown] {
  const { name, args } = literal;
  switch (name) {
    case 'Host':
      for (const host of args) if (!isHostName(host) && !isIpAddress(host)) throw new RuleRefusal(`rule Host "${host.slice(0, 64)}" is not a host name or IP address`);
      return ['host', args.map((host) => host.toLowerCase())];
    case 'Path':
    case 'PathPrefix':
      return ['path', args.map((path) => {
        if (!path.startsWith('/')) throw new RuleRefusal(`rule ${name} "${path.slice(0, 64)}" must start with /`);
        literalValue(path, name);
        return name === 'PathPrefix' ? `${path}*` : path;
      })];
    case 'Method':
      for (const method of args) if (!METHOD.test(method)) throw new RuleRefusal(`rule Method "${method.slice(0, 20)}" is not an HTTP method`);
      return ['method', args];
    case 'Headers':
      if (!HEADER_NAME.test(args[0])) throw new RuleRefusal(`rule Headers name "${args[0].slice(0, 64)}" is not a header name`);
      return ['header', { [args[0]]: [literalValue(args[1], 'Headers value')] }];
    case 'Query': {
      const query: Record<string, string[]> = {};
      for (const pair of args) {
        const [key, value = ''] = pair.split('=', 2);
        if (!/^[A-Za-z0-9._~-]{1,128}$/.test(key)) throw new RuleRefusal(`rule Query key "${key.slice(0, 64)}" is not a plain parameter name`);
        (query[key] ??= []).push(literalValue(value, 'Query value'));
      }
      return ['query', query];
    }
    case 'ClientIP':
      for (const range of args) if (!isCidr(range)) throw new RuleRefusal(`rule ClientIP "${range.slice(0, 64)}" is not an IP address or CIDR`);
      return ['remote_ip', { ranges: args }];
  }
}

function matcherSet(literals: Literal[]): CaddyMatcherSet {
  const set: CaddyMatcherSet = {};
  const negatives: CaddyMatcherSet[] = [];
  for (const literal of literals) {
    const [key, value] = matcherOf(literal);
    if (literal.negated) {
      negatives.push({ [key]: value });
      continue;
    }
    if (key === 'header' || key === 'query') {
      const merged = (set[key] ?? {}) as Record<string, unknown>;
      for (const [name, values] of Object.entries(value as Record<string, unknown>)) {
        if (name in merged) throw new RuleRefusal(`rule combines two ${literal.name} matchers on "${name}" with &&; Caddy cannot express that`);
        merged[name] = values;
      }
      set[key] = merged;
    } else {
      if (key in set) throw new RuleRefusal(`rule combines two ${literal.name === 'PathPrefix' ? 'Path' : literal.name} matchers with &&; Caddy cannot express that`);
      set[key] = value;
    }
  }
  // !A && !B is NOT (A OR B): one `not` holding a set per negated matcher.
  if (negatives.length) set.not = negatives;
  return set;
}

/** Caddy matcher sets (OR'ed) for a rule; throws RuleRefusal naming what Caddy cannot express. */
export function caddyMatchers(rule: string): CaddyMatcherSet[] {
  return disjunctive(parse(rule)).map(matcherSet);
}

/** The host names a rule matches on (for certificate selection and TLS policies); empty when it names none. */
export function ruleHosts(rule: string): string[] {
  const hosts = new Set<string>();
  for (const set of caddyMatchers(rule)) for (const host of (set.host as string[] | undefined) ?? []) hosts.add(host);
  return [...hosts];
}
