// webhook-notifier: each event its settings choose is handed to Bulwark to post (docs/plugins.md); it never connects out itself.
import { request } from 'node:http';
import { createInterface } from 'node:readline';

const PASSED = new Set(['pass', 'accept', 'allow']);
let hello = null;
let settings = {};

/** Whether the settings ask for this event: blocked/passed packets, IDS alerts, gateway changes, DNS blocks, DHCP leases. */
function wanted(event) {
  switch (event.hook) {
    case 'post_rule': return PASSED.has(String(event.payload.action).toLowerCase()) ? settings.notify_on_connection : settings.notify_on_block;
    case 'ids_alert': return settings.notify_on_ids;
    case 'log_event': return event.topic === 'gateway.state' && settings.notify_on_gateway;
    case 'dns_query': return event.topic === 'dns.block' && settings.notify_on_dns_block;
    case 'dhcp_lease': return settings.notify_on_dhcp_lease;
    default: return false;
  }
}

function deliver(event) {
  const body = JSON.stringify({ hook: event.hook, topic: event.topic, at: event.at, payload: event.payload });
  return new Promise((resolve) => {
    const req = request(
      { socketPath: hello.socket, method: 'POST', path: `/api/v1/plugins/${hello.name}/deliveries`, headers: { authorization: `ApiKey ${hello.api_key}`, 'content-type': 'application/json' } },
      (res) => {
        let text = '';
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => {
          console.log(res.statusCode === 202 ? `posting ${event.topic}: ${text}` : `posting ${event.topic} refused: ${res.statusCode} ${text}`);
          resolve();
        });
      },
    );
    req.on('error', (error) => {
      console.error(`posting ${event.topic} failed: ${error.message}`);
      resolve();
    });
    req.end(body);
  });
}

for await (const line of createInterface({ input: process.stdin })) {
  const message = JSON.parse(line);
  if (message.type === 'hello') hello = message;
  if (message.type === 'hello' || message.type === 'config') settings = message.settings;
  if (message.type === 'event' && hello && wanted(message)) await deliver(message);
}
