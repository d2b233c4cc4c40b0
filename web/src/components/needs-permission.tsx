import type { ComponentChildren } from 'preact';
import { useSession } from '../auth/session-context';
import { Notice } from './error-alert';

/** A part of a page that reads what the account may not: a line saying which permission it needs, not a 403. */
export function NeedsPermission({ permission, what, children }: { permission: string; what: string; children: ComponentChildren }) {
  const { can } = useSession();
  if (!can(permission)) return <Notice>{`${what} needs the permission ${permission}.`}</Notice>;
  return <>{children}</>;
}
