/**
 * Grammar for values that travel in protocol headers (syslog HOSTNAME/APP-NAME, SMTP envelope and headers):
 * CR, LF, NUL and every other control character would end the header and start another command.
 */
const HEADER_CONTROL = /[\u0000-\u001f\u007f]/;

export function hasHeaderControl(value: string): boolean {
  return HEADER_CONTROL.test(value);
}

/** The value with every control character replaced, for echoing it in a message or a one-line frame. */
export function replaceControls(value: string, by: string): string {
  return value.replace(new RegExp(HEADER_CONTROL.source, 'g'), by);
}

/** A host name or IP literal: letters, digits, dots, hyphens, colons (IPv6) and brackets, nothing else. */
export const HOST_PATTERN = '^[A-Za-z0-9._:\\[\\]-]*$';
