import { renderRefused } from '../refusal.js';

const BAUD_RATES = new Set(['9600', '19200', '38400', '57600', '115200']);

/** The one writer of kernel console arguments: `console=tty0` or `console=ttyS0,<baud>n8` with a standard rate. */
export function consoleArgument(device: 'video' | 'serial', baud: number | string, field: string): string {
  if (device === 'video') return 'console=tty0';
  if (!BAUD_RATES.has(String(baud))) throw renderRefused('kernel command line', field, 'not a standard baud rate');
  return `console=ttyS0,${String(baud)}n8`;
}
