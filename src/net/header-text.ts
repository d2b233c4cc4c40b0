/**
 * Grammar for values that travel in protocol headers (syslog HOSTNAME/APP-NAME, SMTP envelope and headers):
 * CR, LF, NUL and every other control character would end the header and start another command.
 */
export const HEADER_CONTROL = /[\u0000-\u001f\u007f]/;

export function hasHeaderControl(value: string): boolean {
  return HEADER_CONTROL.test(value);
}

/** A host name or IP literal: letters, digits, dots, hyphens, colons (IPv6) and brackets, nothing else. */
export const HOST_PATTERN = '^[A-Za-z0-9._:\\[\\]-]*$';
