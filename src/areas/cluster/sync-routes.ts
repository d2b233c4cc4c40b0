import type { TLSSocket } from 'node:tls';
import type { Area } from '../area.js';
import type { AppContext } from '../../context.js';
import { route, type RouteSpec } from '../../http/route.js';
import { ErrorAnswer, MediaBody, NoContent } from '../../http/documented-responses.js';
import { IdParams } from '../../model/schema-helpers.js';
import { badRequest, HttpError, notFound } from '../../core/errors.js';
import { isIP } from 'node:net';
import { normalisePin } from '../../net/spki-pin.js';
import { IMPORT_BODY_LIMIT } from '../config/request.js';
import type { ConfigService } from '../config/service.js';
import type { ApiTlsService } from '../tls/service.js';
import type { ClusterService } from './service.js';
import { ClusterSync } from './sync-service.js';
import { regenerateInboundKey } from './sync-keys.js';
import { CertPush } from './sync-cert-push.js';
import type { AcmeService } from '../acme/service.js';
import type { DhcpService } from '../dhcp/service.js';
import { linkDhcpToPair } from './dhcp-link.js';
import {
  ClusterNode, GeneratedKey, NodePatch, NodeSyncStateSchema, PairBody, PairingCallAnswer, PairingCallBody, PairingCodeAnswer, PushAnswer,
  ResolveAnswer, ResolveBody, SnapshotAnswer,
} from './sync-schema.js';
import type { PairBody as PairInput, PairingCall } from './sync-pairing.js';

const TAGS = ['cluster'];
const ACCESS = 'ha:manage' as const;
const NotPaired = ErrorAnswer('this node is not paired');
const PeerFailed = ErrorAnswer('the peer could not be reached, its certificate is not the pinned one, or it refused');

/**
 * Configuration sync between the two nodes of a pair (issue 39 item 3): pairing, the nodes, the snapshot the
 * peers exchange, the state both compare, and the administrator's choice of a side after split-brain.
 */
export function createClusterSyncArea(context: AppContext, deps: { config: ConfigService; cluster: ClusterService; tls: ApiTlsService; acme: AcmeService; dhcp: DhcpService }): Area & { sync: ClusterSync } {
  const sync = new ClusterSync(context, deps);
  linkDhcpToPair(deps.dhcp, deps.cluster, sync);
  const certPush = new CertPush(context, sync, deps.acme);
  deps.cluster.useConfigSync(() => sync.status());
  deps.cluster.peersWithoutKey = () => sync.peersWithoutKey();
  const node = (id: string) => {
    const peer = sync.state.peer();
    if (!peer || peer.id !== id) throw notFound(`cluster node ${id} not found`);
    return peer;
  };
  const routes: RouteSpec[] = [
    {
      method: 'POST', path: '/api/v1/cluster/pairing-code', access: ACCESS, tags: TAGS,
      summary: 'Open a one-time pairing code (10 minutes) on the node to be paired; shows its certificate pin',
      schema: { response: { 201: PairingCodeAnswer, 409: ErrorAnswer('already paired'), 412: ErrorAnswer('no HTTPS listener') } },
      handler: (_request, reply) => reply.status(201).send(sync.pairing.newCode()),
    },
    route({
      method: 'POST', path: '/api/v1/cluster/pairing', access: 'public', tags: TAGS,
      summary: "The other node's pairing call, authenticated by the one-time code (HTTPS only)",
      schema: { body: PairingCallBody, response: { 200: PairingCallAnswer, 403: ErrorAnswer('no open code, a wrong code, or not over HTTPS'), 409: ErrorAnswer('already paired') } },
      handler: (request) => sync.pairing.accept(request.body as PairingCall, { address: request.socket.remoteAddress ?? request.ip, overTls: (request.raw.socket as TLSSocket).encrypted === true }),
    }),
    {
      method: 'GET', path: '/api/v1/cluster/nodes', access: ACCESS, tags: TAGS, summary: 'The paired peer (at most one), its health and synchronised version',
      schema: { response: { 200: { type: 'array', items: ClusterNode } } },
      handler: () => {
        const peer = sync.state.peer();
        return peer ? [sync.nodeView(peer)] : [];
      },
    },
    route({
      method: 'POST', path: '/api/v1/cluster/nodes', access: ACCESS, tags: TAGS,
      summary: "Pair with a peer: its address, HTTPS port, certificate pin and the code it showed (the pin is checked before the code is sent)",
      schema: { body: PairBody, response: { 201: ClusterNode, 400: ErrorAnswer('the pin does not match, or the peer refused the code'), 409: ErrorAnswer('already paired'), 412: ErrorAnswer('no HTTPS listener'), 502: PeerFailed } },
      handler: async (request, reply) => {
        const body = request.body as PairInput;
        if (isIP(body.address) === 0) throw badRequest('body.address must be an IP address');
        const peer = await sync.pairing.pair(body, request.identity?.username ?? 'unknown');
        void sync.poll().then(() => sync.isSender()).then((sender) => (sender ? sync.schedulePush() : undefined)).catch(() => undefined);
        return reply.status(201).send(sync.nodeView(peer));
      },
    }),
    route({
      method: 'GET', path: '/api/v1/cluster/nodes/{id}', access: ACCESS, tags: TAGS, summary: 'The paired peer',
      schema: { params: IdParams(), response: { 200: ClusterNode } },
      handler: (request) => sync.nodeView(node((request.params as { id: string }).id)),
    }),
    route({
      method: 'PUT', path: '/api/v1/cluster/nodes/{id}', access: ACCESS, tags: TAGS,
      summary: "Rename the peer, or pin its new certificate after it changed (compare the pin on the peer's POST /cluster/pairing-code or GET /settings/tls/status)",
      schema: { params: IdParams(), body: NodePatch, response: { 200: ClusterNode } },
      handler: async (request) => {
        const peer = node((request.params as { id: string }).id);
        const { key, ...patch } = request.body as { name?: string; port?: number; fingerprint?: string; key?: string };
        const next = {
          ...peer, ...patch, ...(patch.fingerprint ? { fingerprint: normalisePin(patch.fingerprint) } : {}),
          ...(key ? { outbound_key: context.sealer.seal(key), outbound_key_refused_at: null } : {}),
        };
        sync.state.setPeer(next);
        await sync.poll();
        return sync.nodeView(next);
      },
    }),
    route({
      method: 'POST', path: '/api/v1/cluster/nodes/{id}/generate-key', access: ACCESS, tags: TAGS,
      summary: "Replace the key the peer presents to this node (system service account, ha:manage only): the old one answers 401 at once; the new one is shown once, for PUT /cluster/nodes/{id} {key} on the peer",
      schema: { params: IdParams(), response: { 200: GeneratedKey } },
      handler: (request) => {
        const { peer, key } = regenerateInboundKey(context, node((request.params as { id: string }).id));
        sync.state.setPeer(peer);
        context.log.info({ peer: peer.name }, 'cluster: a new key for the peer was generated (the previous one is revoked)');
        return { key };
      },
    }),
    route({
      method: 'DELETE', path: '/api/v1/cluster/nodes/{id}', access: ACCESS, tags: TAGS, summary: 'Unpair: forget the peer and revoke the key it presents',
      schema: { params: IdParams(), response: { 204: NoContent('Unpaired') } },
      handler: (request, reply) => {
        sync.pairing.unpair((request.params as { id: string }).id);
        return reply.status(204).send();
      },
    }),
    {
      method: 'GET', path: '/api/v1/cluster/snapshot', access: ACCESS, tags: TAGS,
      summary: 'The applied shared configuration as the peer receives it: secrets sealed for the peer, HMAC under the pair key',
      schema: { response: { 200: SnapshotAnswer, 412: NotPaired } },
      handler: () => sync.snapshot(),
    },
    {
      method: 'GET', path: '/api/v1/cluster/snapshot/hash', access: ACCESS, tags: TAGS, summary: 'The applied shared configuration\'s hash (text: sha256 hex)',
      schema: { response: { 200: MediaBody('text/plain', 'sha256 hex'), 412: NotPaired } },
      handler: (_request, reply) => reply.type('text/plain').send(sync.hash()),
    },
    {
      method: 'PUT', path: '/api/v1/cluster/snapshot', access: ACCESS, tags: TAGS, bodyLimit: IMPORT_BODY_LIMIT,
      summary: "The peer's snapshot (its key only): applied through the normal apply path when it extends this node's history (204, wire-format §10); the sender reads the hash held back from /cluster/sync/state",
      schema: {
        response: {
          204: NoContent('Applied, or already held'), 400: ErrorAnswer('not made by the peer (HMAC), malformed, or refused by the model'), 403: ErrorAnswer('not the paired peer\'s key'),
          409: ErrorAnswer('split-brain, older than what this node holds, this node is the primary, or an applier refused it'), 412: NotPaired,
        },
      },
      handler: async (request, reply) => {
        await sync.receive(request.body, request.identity);
        return reply.status(204).send();
      },
    },
    {
      method: 'POST', path: '/api/v1/cluster/snapshot/force', access: ACCESS, tags: TAGS,
      summary: "Fetch the peer's snapshot and apply it here whatever the histories say (as POST /cluster/sync/resolve {keep: peer})",
      schema: { response: { 204: NoContent('Applied'), 412: NotPaired, 502: PeerFailed } },
      handler: async (_request, reply) => {
        await sync.pull();
        return reply.status(204).send();
      },
    },
    {
      method: 'POST', path: '/api/v1/cluster/cert-push', access: ACCESS, tags: TAGS, bodyLimit: 256 * 1024,
      summary: "A certificate the primary renewed (its key only): the key sealed for this node, the body under the pair's HMAC; installed as a renewal here would be (wire-format §10)",
      schema: {
        response: {
          204: NoContent('Installed'), 400: ErrorAnswer('not sent by the peer (HMAC), or the key is not the certificate\'s'), 403: ErrorAnswer('not the paired peer\'s key'),
          404: ErrorAnswer('no such ACME certificate here'), 409: ErrorAnswer('this node is the primary'), 412: NotPaired,
        },
      },
      handler: async (request, reply) => {
        await certPush.receive(request.body, request.identity);
        return reply.status(204).send();
      },
    },
    {
      method: 'GET', path: '/api/v1/cluster/sync/state', access: ACCESS, tags: TAGS, summary: "This node's synchronised history (the peer compares it with its own)",
      schema: { response: { 200: NodeSyncStateSchema, 412: NotPaired } },
      handler: () => sync.localState(),
    },
    {
      method: 'POST', path: '/api/v1/cluster/sync/push', access: ACCESS, tags: TAGS, summary: 'Send the applied configuration to the peer now; 502 with the reason when it does not hold it after',
      schema: { response: { 200: PushAnswer, 412: NotPaired, 502: PeerFailed } },
      handler: async () => {
        const outcome = await sync.push(false);
        if (!outcome.ok) throw new HttpError(502, `configuration sync failed: ${outcome.error}`);
        return outcome;
      },
    },
    route({
      method: 'POST', path: '/api/v1/cluster/sync/resolve', access: ACCESS, tags: TAGS,
      summary: "Resolve split-brain by choosing a side: keep this node's configuration (sent to the peer) or the peer's (applied here)",
      schema: { body: ResolveBody, response: { 200: ResolveAnswer, 412: NotPaired, 502: PeerFailed } },
      handler: (request) => sync.resolve((request.body as { keep: 'local' | 'peer' }).keep),
    }),
  ];
  return {
    name: 'cluster-sync', sync, routes,
    async start() {
      sync.start();
    },
    async stop() {
      await sync.stop();
    },
  };
}
