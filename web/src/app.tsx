import { useCallback, useEffect, useMemo, useState } from 'preact/hooks';
import { LocationProvider, Route, Router, useLocation } from 'preact-iso';
import { ApiClient } from './api/client';
import type { Me } from './api/types';
import { SessionContext, type SessionValue } from './auth/session-context';
import { SignInPage } from './auth/sign-in-page';
import { Shell } from './layout/shell';
import { DashboardPage } from './pages/dashboard-page';
import { NotFoundPage } from './pages/not-found-page';
// every page but the dashboard and the rules is fetched on its first visit
import {
  ChangeSetPage,
  NatPage,
  AliasesPage,
  SchedulesPage,
  VpnPage,
  DnsPage,
  DhcpPage,
  IdsPage,
  MultiWanPage,
  CertificatesPage,
  NetworkingPage,
  LogsPage,
  DiagnosticsPage,
  UsersPage,
  ConfigurationPage,
  SystemPage,
  TimePage,
  ClusterPage,
  GeoipPage,
  PluginsPage,
  UpdatesPage,
  ReverseProxyPage,
  AssertionsPage,
  NotificationsPage,
  FlowExportPage,
} from './pages/on-demand';
import { RulesPage } from './pages/rules-page';

function Pages() {
  return (
    <Router>
      <Route path="/" component={DashboardPage} />
      <Route path="/rules" component={RulesPage} />
      <Route path="/rules/changes" component={ChangeSetPage} />
      <Route path="/nat" component={NatPage} />
      <Route path="/aliases" component={AliasesPage} />
      <Route path="/schedules" component={SchedulesPage} />
      <Route path="/vpn" component={VpnPage} />
      <Route path="/dns" component={DnsPage} />
      <Route path="/dhcp" component={DhcpPage} />
      <Route path="/ids" component={IdsPage} />
      <Route path="/multiwan" component={MultiWanPage} />
      <Route path="/certificates" component={CertificatesPage} />
      <Route path="/networking" component={NetworkingPage} />
      <Route path="/logs" component={LogsPage} />
      <Route path="/diagnostics" component={DiagnosticsPage} />
      <Route path="/users" component={UsersPage} />
      <Route path="/configuration" component={ConfigurationPage} />
      <Route path="/system/:section?" component={SystemPage} />
      <Route path="/time" component={TimePage} />
      <Route path="/cluster" component={ClusterPage} />
      <Route path="/geoip" component={GeoipPage} />
      <Route path="/plugins" component={PluginsPage} />
      <Route path="/updates" component={UpdatesPage} />
      <Route path="/reverse-proxy" component={ReverseProxyPage} />
      <Route path="/assertions" component={AssertionsPage} />
      <Route path="/notifications" component={NotificationsPage} />
      <Route path="/flow-export" component={FlowExportPage} />
      <Route default component={NotFoundPage} />
    </Router>
  );
}

/** undefined: still asking the API whether the stored session is good. */
type SignedIn = Me | null | undefined;

function Console() {
  const api = useMemo(() => new ApiClient(), []);
  const { path, route } = useLocation();
  const [me, setMe] = useState<SignedIn>(api.sessionKind ? undefined : null);

  useEffect(() => {
    api.onSessionEnded = () => setMe(null);
    if (!api.sessionKind) return;
    api.get<Me>('/auth/me').then(setMe, () => {
      api.forget();
      setMe(null);
    });
  }, [api]);

  const signOut = useCallback(async () => {
    // Revoke the session on the server (and clear its cookies); forget it here whatever the answer.
    await api.post('/auth/logout').catch(() => undefined);
    api.forget();
    setMe(null);
    route('/login');
  }, [api, route]);

  const session = useMemo<SessionValue | null>(
    () => (me ? { api, me, can: (permission) => me.permissions.includes(permission), signOut } : null),
    [api, me, signOut],
  );

  useEffect(() => {
    // signed in on the sign-in address (a reload, or a single sign-on TOTP step): go to the dashboard
    if (session && path === '/login') route('/', true);
  }, [session, path]);

  if (me === undefined) return <p class="loading">Loading…</p>;
  if (!session) {
    return (
      <SignInPage
        api={api}
        onSignedIn={(signedIn) => {
          setMe(signedIn);
          if (path === '/login') route('/', true);
        }}
      />
    );
  }
  return (
    <SessionContext.Provider value={session}>
      <Shell>
        <Pages />
      </Shell>
    </SessionContext.Provider>
  );
}

export function App() {
  return (
    <LocationProvider>
      <Console />
    </LocationProvider>
  );
}
