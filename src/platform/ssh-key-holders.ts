import { readHostFile, hostPath } from './host-files.js';

/** Groups whose members administer the host (Debian's sudo, FreeBSD's wheel). */
const ADMIN_GROUPS = new Set(['sudo', 'wheel']);
/** A public key line of authorized_keys: optional options, then a key type and base64 (comments and blanks do not count). */
const KEY_LINE = /(^|\s)(ssh-(rsa|ed25519|dss)|ecdsa-sha2-nistp\d+|sk-(ssh-ed25519|ecdsa-sha2-nistp256)@openssh\.com)\s+[A-Za-z0-9+/]{16,}={0,3}(\s|$)/;

/**
 * The accounts that administer the host (root, members of sudo/wheel) and have at least one key in
 * ~/.ssh/authorized_keys or authorized_keys2, read from the host root's passwd and group files.
 */
export function sshKeyHolders(root: string): string[] {
  const passwd = (readHostFile(hostPath(root, '/etc/passwd')) ?? '').split('\n').map((line) => line.split(':')).filter((fields) => fields.length >= 7);
  const admins = new Set(['root']);
  for (const fields of (readHostFile(hostPath(root, '/etc/group')) ?? '').split('\n').map((line) => line.split(':'))) {
    if (ADMIN_GROUPS.has(fields[0]) && fields[3]) for (const member of fields[3].split(',')) admins.add(member.trim());
  }
  const holders: string[] = [];
  for (const fields of passwd) {
    const [name, , , , , home] = fields;
    if (!admins.has(name) || !home.startsWith('/')) continue;
    const keys = ['authorized_keys', 'authorized_keys2'].map((file) => readHostFile(hostPath(root, `${home}/.ssh/${file}`)) ?? '').join('\n');
    if (keys.split('\n').some((line) => !line.trim().startsWith('#') && KEY_LINE.test(line))) holders.push(name);
  }
  return holders;
}
