import { stripTerminalControls } from './grammar.js';

/**
 * The one writer of text shown on a terminal before or after login. Control characters (CR, NUL, ESC and with
 * it every escape sequence, C1 controls) are removed; LF and TAB stay. For /etc/issue, agetty expands
 * backslash sequences (`\e` would emit ESC again), so every backslash is doubled, which agetty prints as one.
 */
export function terminalText(text: string, file: 'issue' | 'motd'): string {
  const plain = stripTerminalControls(text);
  const body = file === 'issue' ? plain.replace(/\\/g, '\\\\') : plain;
  return body.endsWith('\n') ? body : `${body}\n`;
}
