/**
 * The services part of GET /status: whether the appliance is back after a start (`ready`), and each service the
 * start restores from its applied state with whether it runs, the version it runs and, while starting, what it
 * waits for (src/core/service-restore.ts).
 */
import { Type } from 'typebox';
import type { AppContext } from '../../context.js';

const ServiceStatus = Type.Object({
  name: Type.String({ description: '`packet-filter`, `wireguard`, `reverse-proxy`, `dns`, `dhcp`, `dhcp-ddns`, `time` …' }),
  daemon: Type.String({ description: 'the program or mechanism behind it (`unbound`, `kea-dhcp4`, `chronyd`, `caddy`, `wireguard-go`, `nftables`)' }),
  enabled: Type.Boolean({ description: 'the applied state has it running' }),
  running: Type.Boolean(),
  applied_version: Type.Union([Type.Integer(), Type.Null()], { description: 'the configuration version it runs; null when what it runs was applied without recording a version' }),
  waiting_for: Type.Union([Type.String(), Type.Null()], { description: 'while starting: what it waits for; null once it runs or when it is not enabled' }),
  error: Type.Union([Type.String(), Type.Null()], { description: 'why bringing it back at start failed' }),
});

export const ServicesStatusProperties = {
  ready: Type.Boolean({ description: 'true once every enabled service is back after a start (adopted, re-applied or started)' }),
  services: Type.Array(ServiceStatus),
};

export function servicesStatus(context: AppContext) {
  return context.restore.report();
}
