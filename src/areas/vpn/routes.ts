import { Type } from 'typebox';
import QRCode from 'qrcode';
import type { Area } from '../area.js';
import type { AppContext } from '../../context.js';
import type { PacketFilterService } from '../packet-filter/service.js';
import { WireguardRuntime } from './wireguard-runtime.js';
import { IpsecRuntime } from './ipsec-runtime.js';
import type { CaService } from '../ca/service.js';
import { BINARY, MediaBodies, TEXT } from '../../http/documented-responses.js';
import { route, type RouteSpec } from '../../http/route.js';
import { IdParams, Uuid } from '../../model/schema-helpers.js';
import { collectionRoutes, objectTag } from '../../http/collection-routes.js';
import { requireIfMatch } from '../../http/conditional.js';
import { requireIdentity } from '../../http/access.js';
import { forbidden } from '../../core/errors.js';
import { VpnService } from './service.js';
import {
  IpsecCreate, IpsecRecord, IpsecStatus, IpsecUpdate, PeerConfig, PeerConfigQuery, WgPeerCreate, WgPeerRecord, WgPeerUpdate, WgStatus,
  WgTunnelCreate, WgTunnelRecord, WgTunnelUpdate,
} from './schema.js';

const tags = ['vpn'];
const Message = Type.Object({ message: Type.String() });
const PeerParams = Type.Object({ tid: Uuid(), pid: Uuid() });

export function createVpnArea(context: AppContext, needs: { packetFilter?: PacketFilterService; ca?: CaService } = {}): Area {
  const vpn = new VpnService(context);
  const wireguard = new WireguardRuntime(context, vpn, needs.packetFilter);
  const ipsec = new IpsecRuntime(context, vpn, needs.ca);
  return {
    name: 'vpn',
    routes: routes(vpn, wireguard, ipsec),
    start: async () => {
      await wireguard.boot();
      await ipsec.boot();
    },
    stop: async () => {
      await wireguard.shutdown();
      await ipsec.shutdown();
    },
  };
}

function routes(vpn: VpnService, wireguard: WireguardRuntime, ipsec: IpsecRuntime): RouteSpec[] {
  const ipsecRecord = (id: string) => vpn.ipsec.toRecord(vpn.ipsec.find(id));
  const access = { read: 'vpn:read', write: 'vpn:write' } as const;
  const routes: RouteSpec[] = [
    ...collectionRoutes(vpn.tunnels, { path: '/api/v1/vpn/wg', access, tags, operations: ['list', 'read'] }),
    route({
      method: 'POST', path: '/api/v1/vpn/wg', access: 'vpn:write', tags,
      summary: 'Create a WireGuard tunnel (key pair generated unless private_key is given; the private key is never returned)',
      schema: { body: WgTunnelCreate, response: { 201: WgTunnelRecord } },
      handler: (request, reply) => reply.status(201).send(vpn.tunnels.toRecord(vpn.createTunnel(request.body))),
    }),
    route({
      method: 'PUT', path: '/api/v1/vpn/wg/{id}', access: 'vpn:write', tags,
      summary: 'Change a tunnel (fields not sent are kept; interface and keys stay unless private_key is sent)',
      schema: { params: IdParams(), body: WgTunnelUpdate, response: { 200: WgTunnelRecord } },
      handler: (request) => vpn.tunnels.toRecord(vpn.updateTunnel(request.params.id, request.body)),
    }),
    route({
      method: 'DELETE', path: '/api/v1/vpn/wg/{id}', access: 'vpn:write', tags,
      summary: 'Delete a tunnel (409 while peers use it); a running tunnel is stopped first',
      schema: { params: IdParams() },
      handler: async (request, reply) => {
        await wireguard.deleteTunnel(request.params.id);
        reply.status(204);
      },
    }),
    route({
      method: 'POST', path: '/api/v1/vpn/wg/{id}/start', access: 'vpn:write', tags, summary: 'Bring the tunnel up with all its peers',
      schema: { params: IdParams(), response: { 200: Message } },
      handler: async (request) => {
        await wireguard.start(request.params.id);
        return { message: 'Tunnel started' };
      },
    }),
    route({
      method: 'POST', path: '/api/v1/vpn/wg/{id}/stop', access: 'vpn:write', tags, summary: 'Take the tunnel down',
      schema: { params: IdParams(), response: { 200: Message } },
      handler: async (request) => {
        await wireguard.stop(request.params.id);
        return { message: 'Tunnel stopped' };
      },
    }),
    route({
      method: 'GET', path: '/api/v1/vpn/wg/{id}/status', access: 'vpn:read', tags, summary: 'Live interface and peer handshake status',
      schema: { params: IdParams(), response: { 200: WgStatus } },
      handler: (request) => wireguard.status(request.params.id),
    }),
    ...collectionRoutes(vpn.peers, {
      path: '/api/v1/vpn/wg/{id}/peers', itemPath: '/api/v1/vpn/wg/{tid}/peers/{pid}', idParam: 'pid', parentParams: { list: 'id', item: 'tid' },
      access, tags, operations: ['list', 'read', 'delete'],
    }),
    route({
      method: 'POST', path: '/api/v1/vpn/wg/{id}/peers', access: 'vpn:write', tags,
      summary: 'Add a peer (allowed_ips "" or "auto" picks the next free address; auto_generate_key makes the client key pair)',
      schema: { params: IdParams(), body: WgPeerCreate, response: { 201: WgPeerRecord } },
      handler: (request, reply) => reply.status(201).send(vpn.peers.toRecord(vpn.createPeer(request.params.id, request.body))),
      change: {
        op: 'create', body: WgPeerCreate,
        apply: (params, body) => {
          const created = vpn.createPeer(params.id, body!);
          return { kind: vpn.peers.kind, id: created.id, before: null, after: vpn.peers.toRecord(created) };
        },
      },
    }),
    route({
      method: 'GET', path: '/api/v1/vpn/wg/{id}/peers/next-ip', access: 'vpn:read', tags, summary: 'Next free peer address in the tunnel subnet',
      schema: { params: IdParams(), response: { 200: Type.Object({ next_ip: Type.String() }) } },
      handler: (request) => ({ next_ip: vpn.nextFreeAddress(request.params.id) }),
    }),
    route({
      method: 'PUT', path: '/api/v1/vpn/wg/{tid}/peers/{pid}', access: 'vpn:write', tags,
      summary: 'Change a peer (public key is fixed; preshared_key "" clears it)',
      schema: { params: PeerParams, body: WgPeerUpdate, response: { 200: WgPeerRecord } },
      handler: (request) => vpn.peers.toRecord(vpn.updatePeer(request.params.tid, request.params.pid, request.body)),
      change: {
        op: 'update', body: WgPeerUpdate,
        apply: (params, body, ifMatch, field) => {
          const existing = vpn.peers.find(params.pid, params.tid);
          requireIfMatch(ifMatch, objectTag(vpn.peers, existing), field);
          const before = vpn.peers.toRecord(existing);
          return { kind: vpn.peers.kind, id: existing.id, before, after: vpn.peers.toRecord(vpn.updatePeer(params.tid, params.pid, body!)) };
        },
      },
    }),
    route({
      method: 'GET', path: '/api/v1/vpn/wg/{tid}/peers/{pid}/config', access: 'vpn:read', tags,
      summary: 'Rendered client configuration (full and split tunnel), as JSON, a .conf file or a PNG QR code; key material only with include_keys=true, which needs vpn:write',
      schema: {
        params: PeerParams,
        querystring: PeerConfigQuery,
        response: {
          200: MediaBodies('The configuration as JSON (default), a .conf file (?format=conf) or a PNG QR code (?format=qr)', {
            'application/json': PeerConfig, 'text/plain': TEXT, 'image/png': BINARY,
          }),
        },
      },
      handler: async (request, reply) => {
        const { tid, pid } = request.params;
        const { format, variant, include_keys: includeKeys } = request.query;
        // Key material is write-only everywhere else: reading it needs the permission that could replace it.
        if (includeKeys && !requireIdentity(request).permissions.has('vpn:write')) throw forbidden('permission vpn:write required for include_keys=true (the configuration without keys needs only vpn:read)');
        const config = vpn.peerConfig(tid, pid, includeKeys);
        const text = variant === 'split' ? config.split_tunnel : config.full_tunnel;
        reply.header('cache-control', 'no-store');
        if (format === 'conf') {
          return reply.type('text/plain; charset=utf-8').header('content-disposition', `attachment; filename="peer-${pid.slice(0, 8)}-${variant}.conf"`).send(text);
        }
        if (format === 'qr') return reply.type('image/png').send(await QRCode.toBuffer(text, { errorCorrectionLevel: 'M', margin: 2 }));
        return config;
      },
    }),
    route({
      method: 'GET', path: '/api/v1/vpn/ipsec/status', access: 'vpn:read', tags,
      summary: 'Live state of every IPsec SA (IKE and CHILD SAs, SPIs, bytes) and of charon',
      schema: { response: { 200: IpsecStatus } },
      handler: () => ipsec.status(),
    }),
    ...collectionRoutes(vpn.ipsec, { path: '/api/v1/vpn/ipsec', access, tags, operations: ['list', 'read', 'delete'] }),
    route({
      method: 'POST', path: '/api/v1/vpn/ipsec', access: 'vpn:write', tags, summary: 'Create an IPsec SA',
      schema: { body: IpsecCreate, response: { 201: IpsecRecord } },
      handler: (request, reply) => reply.status(201).send(vpn.ipsec.toRecord(vpn.createIpsec(request.body))),
      change: {
        op: 'create', body: IpsecCreate,
        apply: (_params, body) => {
          const created = vpn.createIpsec(body!);
          return { kind: vpn.ipsec.kind, id: created.id, before: null, after: ipsecRecord(created.id) };
        },
      },
    }),
    route({
      method: 'PUT', path: '/api/v1/vpn/ipsec/{id}', access: 'vpn:write', tags, summary: 'Change an IPsec SA (fields not sent are kept)',
      schema: { params: IdParams(), body: IpsecUpdate, response: { 200: IpsecRecord } },
      handler: (request) => {
        const { id } = request.params;
        vpn.updateIpsec(id, request.body);
        return ipsecRecord(id);
      },
      change: {
        op: 'update', body: IpsecUpdate,
        apply: (params, body, ifMatch, field) => {
          const existing = vpn.ipsec.find(params.id);
          requireIfMatch(ifMatch, objectTag(vpn.ipsec, existing), field);
          const before = vpn.ipsec.toRecord(existing);
          vpn.updateIpsec(existing.id, body!);
          return { kind: vpn.ipsec.kind, id: existing.id, before, after: ipsecRecord(existing.id) };
        },
      },
    }),
  ];
  return routes;
}
