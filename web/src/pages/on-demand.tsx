import type { ComponentType } from 'preact';
import { lazy } from 'preact-iso';
import { Page } from '../components/page';

/**
 * A page whose code is fetched on its first visit, in its own chunk, so the first load (sign-in and dashboard) stays
 * small. A chunk that cannot be fetched — the appliance was updated since this tab loaded, and the old chunk is gone —
 * is said so, with a way to load the console again.
 */
function onDemand<P>(load: () => Promise<ComponentType<P>>): ComponentType<P> {
  return lazy(() => load().catch(() => PageNotLoaded as ComponentType<P>));
}

function PageNotLoaded() {
  return (
    <Page title="Page not loaded">
      <p role="alert">This page could not be fetched from the appliance (it may have been updated since the console was opened).</p>
      <button type="button" onClick={() => location.reload()}>
        Reload the console
      </button>
    </Page>
  );
}

export const ChangeSetPage = onDemand(() => import('./change-set-page').then((m) => m.ChangeSetPage));
export const NatPage = onDemand(() => import('./nat-page').then((m) => m.NatPage));
export const AliasesPage = onDemand(() => import('./aliases-page').then((m) => m.AliasesPage));
export const SchedulesPage = onDemand(() => import('./schedules-page').then((m) => m.SchedulesPage));
export const VpnPage = onDemand(() => import('./vpn-page').then((m) => m.VpnPage));
export const DnsPage = onDemand(() => import('./dns-page').then((m) => m.DnsPage));
export const DhcpPage = onDemand(() => import('./dhcp-page').then((m) => m.DhcpPage));
export const IdsPage = onDemand(() => import('./ids-page').then((m) => m.IdsPage));
export const MultiWanPage = onDemand(() => import('./multiwan-page').then((m) => m.MultiWanPage));
export const CertificatesPage = onDemand(() => import('./certificates-page').then((m) => m.CertificatesPage));
export const NetworkingPage = onDemand(() => import('./networking-page').then((m) => m.NetworkingPage));
export const LogsPage = onDemand(() => import('./logs-page').then((m) => m.LogsPage));
export const DiagnosticsPage = onDemand(() => import('./diagnostics-page').then((m) => m.DiagnosticsPage));
export const UsersPage = onDemand(() => import('./users-page').then((m) => m.UsersPage));
export const ConfigurationPage = onDemand(() => import('./configuration-page').then((m) => m.ConfigurationPage));
export const SystemPage = onDemand(() => import('./system-page').then((m) => m.SystemPage));
export const TimePage = onDemand(() => import('./time-page').then((m) => m.TimePage));
export const ClusterPage = onDemand(() => import('./cluster-page').then((m) => m.ClusterPage));
export const GeoipPage = onDemand(() => import('./geoip-page').then((m) => m.GeoipPage));
export const PluginsPage = onDemand(() => import('./plugins-page').then((m) => m.PluginsPage));
export const UpdatesPage = onDemand(() => import('./updates-page').then((m) => m.UpdatesPage));
export const ReverseProxyPage = onDemand(() => import('./reverse-proxy-page').then((m) => m.ReverseProxyPage));
export const AssertionsPage = onDemand(() => import('./assertions-page').then((m) => m.AssertionsPage));
export const NotificationsPage = onDemand(() => import('./notifications-page').then((m) => m.NotificationsPage));
export const FlowExportPage = onDemand(() => import('./flow-export-page').then((m) => m.FlowExportPage));
