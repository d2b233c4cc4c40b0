import type { IpsecChildState, IpsecSaState } from './ipsec.js';

type Tree = { [key: string]: string | string[] | Tree };

/**
 * Parses one VICI message as `swanctl --raw` prints it: `{name {key=value key=[a b] child {…}}}`. A value runs
 * to the next ` key=`, ` name {` or `}` (identities such as `CN=moon, O=Example` hold spaces; their attribute
 * names are upper case, so they never look like a key).
 */
export function parseRawVici(text: string): Tree {
  let index = 0;
  const skipSpaces = () => {
    while (text[index] === ' ') index++;
  };
  const section = (): Tree => {
    const tree: Tree = {};
    index++; // '{'
    for (;;) {
      skipSpaces();
      if (index >= text.length || text[index] === '}') {
        index++;
        return tree;
      }
      const head = /^([^\s={}]+)(=| \{)/.exec(text.slice(index));
      if (!head) {
        index = text.length;
        return tree;
      }
      index += head[1].length;
      if (head[2] === ' {') {
        index++;
        tree[head[1]] = section();
        continue;
      }
      index++; // '='
      if (text[index] === '[') {
        const end = text.indexOf(']', index);
        tree[head[1]] = text.slice(index + 1, end === -1 ? undefined : end).split(' ').filter(Boolean);
        index = end === -1 ? text.length : end + 1;
        continue;
      }
      const rest = text.slice(index);
      const stop = /( [a-z0-9-]+=| [^\s={}]+ \{|\})/.exec(rest);
      const length = stop ? stop.index : rest.length;
      tree[head[1]] = rest.slice(0, length);
      index += length;
    }
  };
  const start = text.indexOf('{');
  if (start === -1) return {};
  index = start;
  return section();
}

const num = (value: unknown) => (typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : 0);
const text = (value: unknown) => (typeof value === 'string' ? value : null);
const list = (value: unknown) => (Array.isArray(value) ? value : []);

/** The SAs of `swanctl --list-sas --raw`: one `list-sa event` line per IKE SA. */
export function parseListSas(output: string): IpsecSaState[] {
  const sas: IpsecSaState[] = [];
  for (const line of output.split('\n')) {
    if (!line.startsWith('list-sa event')) continue;
    for (const [name, value] of Object.entries(parseRawVici(line.slice('list-sa event'.length)))) {
      if (typeof value !== 'object' || Array.isArray(value)) continue;
      const children: IpsecChildState[] = [];
      const childSas = value['child-sas'];
      if (childSas && typeof childSas === 'object' && !Array.isArray(childSas)) {
        for (const child of Object.values(childSas)) {
          if (typeof child !== 'object' || Array.isArray(child)) continue;
          children.push({
            name: text(child.name) ?? '',
            state: text(child.state) ?? 'UNKNOWN',
            mode: (text(child.mode) ?? '').toLowerCase(),
            protocol: (text(child.protocol) ?? '').toLowerCase(),
            encap: child.encap === 'yes',
            spi_in: text(child['spi-in']),
            spi_out: text(child['spi-out']),
            bytes_in: num(child['bytes-in']),
            bytes_out: num(child['bytes-out']),
            packets_in: num(child['packets-in']),
            packets_out: num(child['packets-out']),
            local_ts: list(child['local-ts']),
            remote_ts: list(child['remote-ts']),
          });
        }
      }
      sas.push({
        name,
        ike_state: text(value.state) ?? 'UNKNOWN',
        local_host: text(value['local-host']),
        remote_host: text(value['remote-host']),
        established_secs: typeof value.established === 'string' ? num(value.established) : null,
        children,
      });
    }
  }
  return sas;
}
