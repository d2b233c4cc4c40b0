import { renderRefused } from '../refusal.js';

const CONSOLE_ARGUMENT = /^console=(tty0|ttyS0,(9600|19200|38400|57600|115200)n8)$/;
const BAUD = /^(9600|19200|38400|57600|115200)$/;

/**
 * The one writer of Bulwark's boot-loader drop-in (/etc/default/grub.d/bulwark.cfg, sourced by update-grub as
 * shell): the kernel console arguments appended to GRUB_CMDLINE_LINUX, and GRUB's own terminal on the serial
 * port when it is used. Only console arguments Bulwark renders (src/render/system/kernel-args.ts) fit; the value is
 * double-quoted and holds no quote, `$`, backslash or backtick by construction.
 */
export function grubConsoleDefaults(args: string[], serialBaud: number | null, field: string): string {
  for (const arg of args) if (!CONSOLE_ARGUMENT.test(arg)) throw renderRefused('boot loader defaults', field, 'not a console argument');
  if (serialBaud !== null && !BAUD.test(String(serialBaud))) throw renderRefused('boot loader defaults', field, 'not a standard baud rate');
  const lines = [
    '# Rendered by Bulwark (system console settings); applies at next boot after update-grub',
    `GRUB_CMDLINE_LINUX="\${GRUB_CMDLINE_LINUX} ${args.join(' ')}"`,
  ];
  if (serialBaud !== null) {
    lines.push(`GRUB_TERMINAL="${args.some((a) => a === 'console=tty0') ? 'console serial' : 'serial'}"`);
    lines.push(`GRUB_SERIAL_COMMAND="serial --unit=0 --speed=${serialBaud} --word=8 --parity=no --stop=1"`);
  }
  return `${lines.join('\n')}\n`;
}
