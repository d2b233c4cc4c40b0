import type { HostSsh } from '../../platform/host-settings.js';

/**
 * Whether an SSH change would lock the administrators out of the shell, and why (null when it would not).
 * Refused: password authentication off while no administrator (root, or a member of sudo/wheel) has an
 * authorized key — nobody could log in; and sshd on the API's own port — it would have no address to listen
 * on. Turning SSH off altogether is allowed: the API (and the console) remain the way in.
 */
export function sshLockout(ssh: HostSsh, host: { apiPort: number; keyHolders: string[] }): string | null {
  if (!ssh.enabled) return null;
  if (ssh.port === host.apiPort) return `system.ssh.port ${ssh.port} is the API's own port: sshd would have no address to listen on`;
  if (!ssh.password_auth && host.keyHolders.length === 0) {
    return 'password authentication off, and no administrator (root or a member of sudo/wheel) has a key in ~/.ssh/authorized_keys: nobody could log in over SSH. Add a key first, or keep password authentication on';
  }
  return null;
}
