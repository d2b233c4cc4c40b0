import type { Column } from '../components/data-table';
import { CollectionSection } from '../components/collection-section';
import type { FieldSpec } from '../components/record-form';
import type { Row } from '../api/types';

const ENABLED: FieldSpec = { name: 'enabled', label: 'Enabled', kind: 'checkbox' };
const NAME: FieldSpec = { name: 'name', label: 'Name', kind: 'text', required: true };

interface ProxyCollection {
  title: string;
  itemName: string;
  /** The API path written out, so the console coverage test sees it. */
  path: string;
  fields: readonly FieldSpec[];
  columns: readonly Column<Row>[];
  /** Whether its records have an enabled flag (TLS stores and resolvers have none). */
  switchable: boolean;
}

/** As the API declares them (src/areas/reverse-proxy/schema.ts MiddlewareTypes). */
const MIDDLEWARE_TYPES = [
  'rateLimit', 'inFlightReq', 'ipAllowList', 'ipDenyList', 'basicAuth', 'digestAuth', 'forwardAuth', 'jwt', 'headers',
  'passTLSClientCert', 'contentType', 'compress', 'redirectScheme', 'redirectRegex', 'stripPrefix', 'stripPrefixRegex',
  'addPrefix', 'replacePath', 'replacePathRegex', 'retry', 'circuitBreaker', 'buffering', 'chain', 'grpcWeb', 'errors',
];

const L4_ROUTER_FIELDS = (rule: FieldSpec): readonly FieldSpec[] => [
  NAME,
  rule,
  { name: 'service', label: 'Service', kind: 'text', required: true },
  { name: 'entry_points', label: 'Entrypoints (JSON)', kind: 'text', hint: 'e.g. ["postgres"]' },
  { name: 'priority', label: 'Priority', kind: 'number' },
];

const L4_SERVICE_FIELDS: readonly FieldSpec[] = [
  NAME,
  { name: 'service_type', label: 'Type', kind: 'select', options: ['loadBalancer', 'weighted'] },
  { name: 'config_json', label: 'Configuration (JSON)', kind: 'paragraph', required: true, hint: 'e.g. {"servers":[{"address":"10.0.0.5:5432"}]}' },
];

const ROUTER_COLUMNS: readonly Column<Row>[] = [
  { key: 'name', label: 'Name' },
  { key: 'rule', label: 'Rule' },
  { key: 'service', label: 'Service' },
  { key: 'entry_points', label: 'Entrypoints' },
  { key: 'enabled', label: 'Enabled' },
];

const SERVICE_COLUMNS: readonly Column<Row>[] = [
  { key: 'name', label: 'Name' },
  { key: 'service_type', label: 'Type' },
  { key: 'config_json', label: 'Configuration' },
  { key: 'enabled', label: 'Enabled' },
];

const CONFIG_COLUMNS: readonly Column<Row>[] = [
  { key: 'name', label: 'Name' },
  { key: 'config_json', label: 'Configuration' },
];

const COLLECTIONS: readonly ProxyCollection[] = [
  {
    title: 'HTTP middlewares', itemName: 'HTTP middleware', path: '/reverse-proxy/http/middlewares', switchable: true,
    fields: [
      NAME,
      { name: 'middleware_type', label: 'Type', kind: 'select', options: MIDDLEWARE_TYPES },
      { name: 'config_json', label: 'Configuration (JSON)', kind: 'paragraph', required: true, hint: 'e.g. {"average":100,"burst":50}; passwords read back redacted and are kept when sent back so' },
    ],
    columns: [
      { key: 'name', label: 'Name' },
      { key: 'middleware_type', label: 'Type' },
      { key: 'config_json', label: 'Configuration' },
      { key: 'enabled', label: 'Enabled' },
    ],
  },
  {
    title: 'TCP routers', itemName: 'TCP router', path: '/reverse-proxy/tcp/routers', switchable: true,
    fields: [
      ...L4_ROUTER_FIELDS({ name: 'rule', label: 'Rule', kind: 'text', required: true, hint: 'e.g. HostSNI(`*`)' }),
      { name: 'tls_json', label: 'TLS (JSON)', kind: 'paragraph', hint: 'passthrough, certResolver, options; empty: no TLS' },
    ],
    columns: ROUTER_COLUMNS,
  },
  { title: 'TCP services', itemName: 'TCP service', path: '/reverse-proxy/tcp/services', switchable: true, fields: L4_SERVICE_FIELDS, columns: SERVICE_COLUMNS },
  {
    title: 'UDP routers', itemName: 'UDP router', path: '/reverse-proxy/udp/routers', switchable: true,
    fields: L4_ROUTER_FIELDS({ name: 'rule', label: 'Rule', kind: 'text', hint: 'UDP routers match on the entrypoint only; may stay empty' }),
    columns: ROUTER_COLUMNS.filter((column) => column.key !== 'rule'),
  },
  { title: 'UDP services', itemName: 'UDP service', path: '/reverse-proxy/udp/services', switchable: true, fields: L4_SERVICE_FIELDS, columns: SERVICE_COLUMNS },
  {
    title: 'TLS certificates', itemName: 'TLS certificate', path: '/reverse-proxy/tls/certs', switchable: false,
    fields: [
      NAME,
      { name: 'source', label: 'From', kind: 'text', hint: 'acme:<certificate id> or ca:<certificate id>; or give the files below' },
      { name: 'cert_file', label: 'Certificate file', kind: 'text', hint: 'absolute path under a certificate directory' },
      { name: 'key_file', label: 'Key file', kind: 'text' },
      { name: 'stores_json', label: 'Stores (JSON)', kind: 'text', hint: 'e.g. ["default"]' },
    ],
    columns: [
      { key: 'name', label: 'Name' },
      { key: 'source', label: 'From' },
      { key: 'cert_file', label: 'Certificate file' },
      { key: 'stores_json', label: 'Stores' },
    ],
  },
  {
    title: 'TLS options', itemName: 'TLS option set', path: '/reverse-proxy/tls/options', switchable: false,
    fields: [NAME, { name: 'config_json', label: 'Options (JSON)', kind: 'paragraph', required: true, hint: 'e.g. {"minVersion":"VersionTLS12","sniStrict":true}' }],
    columns: CONFIG_COLUMNS,
  },
  {
    title: 'Certificate resolvers', itemName: 'certificate resolver', path: '/reverse-proxy/cert-resolvers', switchable: false,
    fields: [NAME, { name: 'config_json', label: 'Resolver (JSON)', kind: 'paragraph', required: true, hint: '{"acme":{"email":"…","storage":"…","httpChallenge":{"entryPoint":"web"}}}' }],
    columns: CONFIG_COLUMNS,
  },
];

/** The reverse proxy's other collections: HTTP middlewares, TCP and UDP routing, TLS stores and certificate resolvers. */
export function ProxyCollections() {
  return (
    <>
      {COLLECTIONS.map(({ title, itemName, path, fields, columns, switchable }) => (
        <CollectionSection
          key={path}
          title={title}
          itemName={itemName}
          path={path}
          writePermission="proxy:write"
          readEach={false}
          deletable
          columns={columns}
          createFields={fields}
          editFields={switchable ? [...fields, ENABLED] : fields}
        />
      ))}
    </>
  );
}
