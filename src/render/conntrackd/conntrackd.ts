/**
 * conntrackd.conf for /cluster/pfsync: FTFW (reliable) state sync over unicast UDP on the sync interface to the
 * peer, with an external cache that keepalived's notify script commits on takeover. conntrackd's parser has
 * keepalived's whitespace-word grammar, so every value goes through keepalived-syntax.ts.
 */
import { keepalivedAddress, keepalivedPath, keepalivedWord } from '../keepalived/keepalived-syntax.js';

export const CONNTRACKD_PORT = 3780;

export interface ConntrackdInput {
  syncInterface: string;
  localAddress: string;
  peerAddress: string;
  /** Addresses whose own flows are not synchronised (the sync link, the virtual addresses). */
  ignoreAddresses: string[];
}

export function renderConntrackdConf(input: ConntrackdInput, files: { lockFile: string; socket: string; logFile: string }): string {
  const family = (address: string, field: string) => (keepalivedAddress(address, field).includes(':') ? 'IPv6_address' : 'IPv4_address');
  const ignore = [...new Set(['127.0.0.1', input.localAddress, ...input.ignoreAddresses])];
  const v6 = input.localAddress.includes(':');
  return [
    '# Rendered by Bulwark from /cluster/pfsync; edits are overwritten.',
    'Sync {',
    '  Mode FTFW {',
    '    ResendQueueSize 131072',
    '    PurgeTimeout 60',
    '    ACKWindowSize 300',
    '  }',
    '  UDP {',
    `    ${v6 ? 'IPv6_address' : 'IPv4_address'} ${keepalivedAddress(input.localAddress, 'local_address')}`,
    `    ${v6 ? 'IPv6_Destination_Address' : 'IPv4_Destination_Address'} ${keepalivedAddress(input.peerAddress, 'sync_peer')}`,
    `    Port ${CONNTRACKD_PORT}`,
    `    Interface ${keepalivedWord(input.syncInterface, 'sync_interface')}`,
    '    SndSocketBuffer 1249280',
    '    RcvSocketBuffer 1249280',
    '    Checksum on',
    '  }',
    '}',
    'General {',
    '  HashSize 32768',
    '  HashLimit 131072',
    `  LogFile ${keepalivedPath(files.logFile, 'log_file')}`,
    `  LockFile ${keepalivedPath(files.lockFile, 'lock_file')}`,
    '  UNIX {',
    `    Path ${keepalivedPath(files.socket, 'socket')}`,
    '  }',
    '  NetlinkBufferSize 2097152',
    '  NetlinkBufferSizeMaxGrowth 8388608',
    '  Filter From Userspace {',
    '    Protocol Accept {',
    '      TCP',
    '      UDP',
    '    }',
    '    Address Ignore {',
    ...ignore.map((address, index) => `      ${family(address, `ignore.${index}`)} ${address}`),
    '    }',
    '  }',
    '}',
    '',
  ].join('\n');
}
