// ip-reputation: feeds its blocklist setting into its system alias (docs/plugins.md), at hello and on each change.
import { request } from 'node:http';
import { createInterface } from 'node:readline';

let hello = null;

function feed(blocklist) {
  const body = JSON.stringify({ entries: blocklist });
  return new Promise((resolve) => {
    const req = request(
      { socketPath: hello.socket, method: 'PUT', path: `/api/v1/plugins/${hello.name}/provided/entries`, headers: { authorization: `ApiKey ${hello.api_key}`, 'content-type': 'application/json' } },
      (res) => {
        let text = '';
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => {
          console.log(res.statusCode === 200 ? `blocking ${blocklist.length} address(es)` : `feeding the blocklist failed: ${res.statusCode} ${text}`);
          resolve();
        });
      },
    );
    req.on('error', (error) => {
      console.error(`feeding the blocklist failed: ${error.message}`);
      resolve();
    });
    req.end(body);
  });
}

for await (const line of createInterface({ input: process.stdin })) {
  const message = JSON.parse(line);
  if (message.type === 'hello') hello = message;
  if (message.type === 'hello' || message.type === 'config') await feed(message.settings.blocklist ?? []);
}
