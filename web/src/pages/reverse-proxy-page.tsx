import { CollectionSection } from '../components/collection-section';
import { Page } from '../components/page';
import type { FieldSpec } from '../components/record-form';
import { ServiceStatus } from '../components/service-controls';
import { SettingsSection } from '../components/settings-form';
import { ProxyCollections } from './reverse-proxy-more';

const ENABLED: FieldSpec = { name: 'enabled', label: 'Enabled', kind: 'checkbox' };

const ENTRYPOINT_FIELDS: readonly FieldSpec[] = [
  { name: 'name', label: 'Name', kind: 'text', required: true, hint: 'letters, digits, . _ -' },
  { name: 'address', label: 'Address', kind: 'text', required: true, hint: 'e.g. :443 or 0.0.0.0:80/udp' },
  { name: 'config_json', label: 'Extra configuration (JSON)', kind: 'paragraph', hint: 'merged into entryPoints.<name>; e.g. {}' },
];

const ROUTER_FIELDS: readonly FieldSpec[] = [
  { name: 'name', label: 'Name', kind: 'text', required: true },
  { name: 'rule', label: 'Rule', kind: 'text', required: true, hint: 'e.g. Host(`example.org`)' },
  { name: 'service', label: 'Service', kind: 'text', required: true, hint: 'an HTTP service name' },
  { name: 'entry_points', label: 'Entrypoints (JSON)', kind: 'text', hint: 'e.g. ["websecure"]' },
  { name: 'middlewares', label: 'Middlewares (JSON)', kind: 'text', hint: 'in order, e.g. ["auth"]' },
  { name: 'priority', label: 'Priority', kind: 'number' },
  { name: 'tls_json', label: 'TLS (JSON)', kind: 'paragraph', hint: 'certResolver, options, domains; empty: no TLS' },
];

const SERVICE_FIELDS: readonly FieldSpec[] = [
  { name: 'name', label: 'Name', kind: 'text', required: true },
  { name: 'service_type', label: 'Type', kind: 'select', options: ['loadBalancer', 'weighted', 'mirroring', 'failover'], initial: 'loadBalancer' },
  { name: 'config_json', label: 'Configuration (JSON)', kind: 'paragraph', required: true, hint: 'e.g. {"servers":[{"url":"http://10.0.0.5:8080"}]}' },
];

const CONFIG_FIELDS: readonly FieldSpec[] = [
  { name: 'enabled', label: 'Proxy enabled', kind: 'checkbox' },
  { name: 'log_level', label: 'Log level', kind: 'select', options: ['DEBUG', 'INFO', 'WARN', 'ERROR'] },
  { name: 'access_log_enabled', label: 'Access log', kind: 'checkbox' },
  { name: 'access_log_path', label: 'Access log file', kind: 'text', hint: 'under /var/log/bulwark/ or the data directory\'s logs/' },
  { name: 'access_log_format', label: 'Access log format', kind: 'select', options: ['common', 'json', 'clf', 'combined'] },
  { name: 'metrics_enabled', label: 'Metrics', kind: 'checkbox' },
  { name: 'metrics_address', label: 'Metrics address', kind: 'text', hint: 'e.g. 127.0.0.1:8082' },
  { name: 'api_dashboard', label: 'Proxy dashboard', kind: 'checkbox' },
];

export function ReverseProxyPage() {
  return (
    <Page title="Reverse proxy" help="The reverse proxy (Caddy): entrypoints, HTTP routers, middlewares and services, TCP and UDP routing, TLS certificates and options. Check tests the configuration; changes take effect with Apply.">
      <ServiceStatus
        status={{ title: 'Proxy status', path: '/reverse-proxy/status' }}
        title="Proxy control"
        writePermission="proxy:write"
        actions={[
          { path: '/reverse-proxy/validate', label: 'Check proxy configuration' },
          { path: '/reverse-proxy/apply', label: 'Apply proxy configuration' },
          { path: '/reverse-proxy/restart', label: 'Restart proxy' },
          { path: '/reverse-proxy/start', label: 'Start proxy' },
          { path: '/reverse-proxy/stop', label: 'Stop proxy' },
        ]}
      />
      <SettingsSection title="Proxy settings" path="/reverse-proxy/config" writePermission="proxy:write" fields={CONFIG_FIELDS} />
      <CollectionSection
        title="Entrypoints"
        itemName="entrypoint"
        path="/reverse-proxy/entrypoints"
        writePermission="proxy:write"
        readEach={false}
        deletable
        columns={[
          { key: 'name', label: 'Name' },
          { key: 'address', label: 'Address' },
          { key: 'enabled', label: 'Enabled' },
        ]}
        createFields={ENTRYPOINT_FIELDS}
        editFields={[...ENTRYPOINT_FIELDS, ENABLED]}
      />
      <CollectionSection
        title="HTTP routers"
        itemName="HTTP router"
        path="/reverse-proxy/http/routers"
        writePermission="proxy:write"
        readEach={false}
        deletable
        columns={[
          { key: 'name', label: 'Name' },
          { key: 'rule', label: 'Rule' },
          { key: 'service', label: 'Service' },
          { key: 'entry_points', label: 'Entrypoints' },
          { key: 'enabled', label: 'Enabled' },
        ]}
        createFields={ROUTER_FIELDS}
        editFields={[...ROUTER_FIELDS, ENABLED]}
      />
      <CollectionSection
        title="HTTP services"
        itemName="HTTP service"
        path="/reverse-proxy/http/services"
        writePermission="proxy:write"
        readEach={false}
        deletable
        columns={[
          { key: 'name', label: 'Name' },
          { key: 'service_type', label: 'Type' },
          { key: 'config_json', label: 'Configuration' },
          { key: 'enabled', label: 'Enabled' },
        ]}
        createFields={SERVICE_FIELDS}
        editFields={[...SERVICE_FIELDS, ENABLED]}
      />
      <ProxyCollections />
    </Page>
  );
}
