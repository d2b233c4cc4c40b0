import { Type } from 'typebox';
import { StringEnum } from '../../model/schema-helpers.js';
import { NullableString } from '../common/schemas.js';

export const UpdateStatus = Type.Object({
  os_version: Type.String(),
  last_check: NullableString(),
  pending_os_updates: Type.Boolean(),
  pending_pkg_count: Type.Integer(),
  pending_packages: Type.Array(Type.String()),
  needs_reboot: Type.Boolean(),
  checking: Type.Boolean(),
  installing: Type.Boolean(),
  simulated: Type.Boolean(),
  maintenance_next_run: NullableString({ description: 'when Bulwark\'s scheduler runs the maintenance window next (null: disabled)' }),
});

export const UpdatePreview = Type.Object({
  message: Type.String(),
  changes: Type.Array(Type.Object({
    action: StringEnum(['upgrade', 'install', 'remove']),
    name: Type.String(),
    from: NullableString(),
    to: NullableString(),
  })),
});

export const HistoryEntry = Type.Object({ id: Type.Integer(), action: Type.String(), details: Type.String(), status: Type.String(), created_at: Type.String() });

export const Schedule = Type.Object({
  enabled: Type.Boolean({ default: false }),
  day_of_week: StringEnum(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], { default: 'sun' }),
  time: Type.String({ default: '03:00', pattern: '^([01]\\d|2[0-3]):[0-5]\\d$', description: 'HH:MM, 24 h' }),
  auto_install: Type.Boolean({ default: false }),
  auto_reboot: Type.Boolean({ default: false }),
  auto_check: Type.Boolean({ default: true }),
  auto_update_appliance: Type.Boolean({ default: false }),
});

export const UpdateInfo = Type.Object({
  current_version: Type.String(),
  latest_version: Type.String(),
  update_available: Type.Boolean(),
  release_notes: Type.String(),
  published_at: Type.String(),
  tarball_url: NullableString(),
  checksum_url: NullableString(),
  signature_url: NullableString({ description: 'the release\'s detached signature asset (.tar.gz.sig)' }),
  has_backup: Type.Boolean(),
  backup_version: NullableString(),
  restart_pending: Type.Boolean(),
  running_version: Type.String(),
  reboot_recommended: Type.Boolean(),
  reboot_reason: NullableString(),
  release_url: Type.String(),
  signer_key_id: NullableString({ description: 'the id of the trusted key that signed the current release (null: installed by the installer, not through an update)' }),
  install_root: Type.String({ description: 'the root the appliance is installed under (--install-root)' }),
  installed: Type.Boolean({ description: 'false in a development tree: no /opt/bulwark/current to switch' }),
  releases: Type.Array(Type.String(), { description: 'the kept releases, oldest first: any is a rollback target' }),
  service_manager: Type.String({ description: 'what restarts Bulwark: systemd (bulwark.service), bulwark-supervise.sh or none' }),
  last_activation: Type.Union([Type.Null(), Type.Object({
    mode: Type.String(), target: Type.String(), previous: NullableString(), outcome: Type.String(), reason: Type.String(),
    key_id: NullableString(), started_at: Type.String(), timings_ms: Type.Record(Type.String(), Type.Number()),
  })], { description: 'the last install, rollback or restart the activation helper finished, with its timings' }),
});

export const InstallResult = Type.Object({
  message: Type.String(),
  restart_required: Type.Boolean(),
  reboot_recommended: Type.Boolean(),
  reboot_reason: NullableString(),
});

export const InstallLocalBody = Type.Object({
  filename: Type.String({ pattern: '^bulwark-[0-9A-Za-z.+-]+\\.tar\\.(gz|xz)$', description: 'bulwark-<version>.tar.gz or .tar.xz' }),
  content_base64: Type.String({ minLength: 4 }),
  sha256: Type.Optional(Type.String({ maxLength: 1024, description: 'checksum line: "hex  file", "SHA256 (file) = hex" or bare hex' })),
  signature: Type.Optional(Type.String({ maxLength: 4096, description: 'the text of the release\'s detached signature file (bulwark-<version>.tar.gz.sig); without it the release is refused' })),
  restart: Type.Optional(Type.Boolean({ description: 'ignored: a verified release is always switched to and restarted' })),
});

export const RollbackBody = Type.Object({
  version: Type.Optional(Type.String({ pattern: '^[0-9A-Za-z][0-9A-Za-z.+-]{0,63}$', description: 'a kept release (default: the one before the last switch)' })),
});
