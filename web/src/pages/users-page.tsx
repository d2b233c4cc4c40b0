import { useState } from 'preact/hooks';
import { useSession } from '../auth/session-context';
import { CollectionSection } from '../components/collection-section';
import { DataTable } from '../components/data-table';
import { ErrorAlert, messageOf } from '../components/error-alert';
import { formatTime } from '../components/format';
import { Page } from '../components/page';
import { RecordForm } from '../components/record-form';
import { toggleField } from '../components/record-editor';
import type { FieldSpec } from '../components/record-form';
import { SettingsSection } from '../components/settings-form';
import { TotpEnrolment } from './totp-enrolment';

const ROLES = ['viewer', 'operator', 'admin'];

const ROLE_FIELDS: readonly FieldSpec[] = [
  { name: 'name', label: 'Role name', kind: 'text' },
  { name: 'permissions', label: 'Permissions', kind: 'lines', hint: 'e.g. rules:read, one per line' },
  { name: 'description', label: 'Description', kind: 'text' },
];

const SSO_FIELDS: readonly FieldSpec[] = [
  { name: 'public_url', label: 'Public URL', kind: 'text', sendEmpty: true, hint: 'e.g. https://fw.example.org; empty: taken from the request' },
  { name: 'allowed_networks', label: 'Allowed provider addresses', kind: 'lines', hint: 'private or local addresses an on-premises provider may have, one per line' },
  { name: 'trusted_ca_pem', label: 'Extra trusted CA certificates (PEM)', kind: 'paragraph', sendEmpty: true },
  { name: 'auto_create_oauth_users', label: 'Create accounts on first single sign-on', kind: 'checkbox' },
  { name: 'require_totp_for_oauth', label: 'Require two-factor after single sign-on', kind: 'checkbox' },
];

const PROVIDER_FIELDS: readonly FieldSpec[] = [
  { name: 'name', label: 'Name', kind: 'text', hint: 'shown on the sign-in page and used in the callback path' },
  { name: 'provider_type', label: 'Type', kind: 'select', options: ['oidc', 'preset_a', 'preset_b'] },
  { name: 'client_id', label: 'Client id', kind: 'text' },
  { name: 'client_secret', label: 'Client secret', kind: 'password', hint: 'write-only: never shown again; when editing, leave empty to keep it' },
  { name: 'scopes', label: 'Scopes', kind: 'text', sendEmpty: true, hint: "space-separated; empty: the type's default" },
  { name: 'auth_url', label: 'Authorization URL', kind: 'text', hint: 'https; required for oidc' },
  { name: 'token_url', label: 'Token URL', kind: 'text', hint: 'https; required for oidc' },
  { name: 'userinfo_url', label: 'Userinfo URL', kind: 'text', hint: 'https; required for oidc' },
  { name: 'issuer', label: 'Issuer', kind: 'text', hint: "default: the preset's, or the origin of the authorization URL" },
];

/** Single sign-on: where the console is reached from, and the identity providers offered on the sign-in page. */
function SingleSignOn() {
  const { can } = useSession();
  return (
    <>
      {can('settings:write') && <SettingsSection title="Single sign-on" path="/auth/oauth/settings" writePermission="settings:write" fields={SSO_FIELDS} />}
      <CollectionSection
        title="Identity providers"
        itemName="identity provider"
        path="/auth/oauth/providers"
        writePermission="settings:write"
        deletable
        readEach={false}
        describe={(row) => `the identity provider ${String(row.name)}`}
        createFields={PROVIDER_FIELDS}
        editFields={[...PROVIDER_FIELDS, { name: 'enabled', label: 'Enabled', kind: 'checkbox' }]}
        columns={[
          { key: 'name', label: 'Name' },
          { key: 'provider_type', label: 'Type' },
          { key: 'client_id', label: 'Client id' },
          { key: 'scopes', label: 'Scopes' },
          { key: 'enabled', label: 'Enabled' },
        ]}
      />
    </>
  );
}

/** API keys: listed without their secret; a new key's secret is shown once, right after creating it. */
function ApiKeys() {
  const { api, can } = useSession();
  const [secret, setSecret] = useState<{ name: string; key: string } | null>(null);
  const [creating, setCreating] = useState(false);
  const [generation, setGeneration] = useState(0);
  if (!can('users:write')) {
    return (
      <section class="panel" aria-label="API keys">
        <h2>API keys</h2>
        <p class="help">Managing API keys needs the users:write permission.</p>
      </section>
    );
  }
  return (
    <>
      {secret && (
        <section class="banner secret" aria-label="New API key">
          <p>
            <strong>The API key "{secret.name}" was created.</strong> Copy it now: it is shown only this once.
          </p>
          <code class="secret-value">{secret.key}</code>
          <button type="button" class="secondary" onClick={() => setSecret(null)}>
            Done
          </button>
        </section>
      )}
      {creating && (
        <RecordForm
          title="New API key"
          submitLabel="Create key"
          onCancel={() => setCreating(false)}
          fields={[
            { name: 'name', label: 'Key name', kind: 'text' },
            { name: 'permissions', label: 'Permissions', kind: 'lines', hint: 'e.g. rules:read, one per line (at most your own)' },
            { name: 'expires_at', label: 'Expires at', kind: 'text', hint: 'ISO 8601, e.g. 2027-01-01T00:00:00Z; empty: never' },
          ]}
          onSubmit={async (body) => {
            const created = await api.post<{ name: string; key: string }>('/auth/api-keys', { permissions: [], ...body });
            setSecret({ name: created.name, key: created.key });
            setCreating(false);
            setGeneration((n) => n + 1);
          }}
        />
      )}
      {!creating && (
        <p>
          <button type="button" onClick={() => setCreating(true)}>
            Create API key
          </button>
        </p>
      )}
      <CollectionSection
        key={generation}
        title="API keys"
        path="/auth/api-keys"
        writePermission="users:write"
        deletable
        describe={(row) => `the API key "${String(row.name)}" (it stops working at once)`}
        columns={[
          { key: 'name', label: 'Name' },
          { key: 'prefix', label: 'Prefix' },
          { key: 'permissions', label: 'Permissions' },
          { key: 'created_by', label: 'Created by' },
          { key: 'expires_at', label: 'Expires', render: (row) => formatTime(row.expires_at as string | null) },
          { key: 'last_used_at', label: 'Last used', render: (row) => formatTime(row.last_used_at as string | null) },
        ]}
      />
    </>
  );
}

/** Who the user is and what the role grants. */
function MyAccount() {
  const { me } = useSession();
  return (
    <section class="panel" aria-label="My account">
      <h2>My account</h2>
      <DataTable
        caption="My account"
        rows={[me]}
        columns={[
          { key: 'username', label: 'User' },
          { key: 'role', label: 'Role' },
          { key: 'auth_provider', label: 'Signs in with' },
          { key: 'totp_enabled', label: 'Two-factor' },
          { key: 'permissions', label: 'Permissions', render: (row) => row.permissions.join(', ') },
        ]}
      />
      <TotpEnrolment />
    </section>
  );
}

export function UsersPage() {
  const { api, can } = useSession();
  const [error, setError] = useState<string | null>(null);
  return (
    <Page title="Users" help="Accounts, roles and API keys, single sign-on, and your own two-factor authentication.">
      <MyAccount />
      <ErrorAlert message={error} />
      <CollectionSection
        title="Users"
        itemName="user"
        path="/auth/users"
        writePermission="users:write"
        deletable
        describe={(row) => `the account ${String(row.username)}`}
        columns={[
          { key: 'username', label: 'User' },
          { key: 'email', label: 'Email' },
          { key: 'role', label: 'Role' },
          { key: 'enabled', label: 'Enabled' },
          { key: 'totp_enabled', label: 'Two-factor' },
          { key: 'auth_provider', label: 'Signs in with' },
        ]}
        canChange={(row) => row.auth_provider !== 'system'}
        createFields={[
          { name: 'username', label: 'User name', kind: 'text' },
          { name: 'password', label: 'Initial password', kind: 'password' },
          { name: 'email', label: 'Email', kind: 'text' },
          { name: 'role', label: 'Role', kind: 'select', options: ROLES },
        ]}
        editFields={[
          { name: 'email', label: 'Email', kind: 'text' },
          { name: 'role', label: 'Role', kind: 'select', options: ROLES },
          { name: 'enabled', label: 'Enabled', kind: 'checkbox' },
          { name: 'password', label: 'New password', kind: 'password' },
        ]}
        rowActions={(row, reload) =>
          can('users:write') && row.auth_provider !== 'system' ? (
            <button
              type="button"
              class="secondary"
              onClick={() => {
                setError(null);
                toggleField(api, `/auth/users/${String(row.id)}`, 'enabled', row.enabled === true, 'account').then(reload, (failure: unknown) => {
                  setError(messageOf(failure));
                  reload();
                });
              }}
            >
              {row.enabled ? 'Disable' : 'Enable'}
            </button>
          ) : null
        }
      />
      <CollectionSection
        title="Roles"
        itemName="role"
        path="/auth/roles"
        writePermission="users:write"
        deletable
        // built-in roles cannot be changed
        canChange={(row) => row.builtin !== true}
        createFields={ROLE_FIELDS}
        editFields={ROLE_FIELDS}
        columns={[
          { key: 'name', label: 'Role' },
          { key: 'description', label: 'Description' },
          { key: 'builtin', label: 'Built in' },
          { key: 'permissions', label: 'Permissions' },
        ]}
      />
      <ApiKeys />
      <SingleSignOn />
    </Page>
  );
}
