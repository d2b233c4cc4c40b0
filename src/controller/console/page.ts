/**
 * The controller's console page (GET /fleet): appliances (version, health, last seen, revisions, drift) and rollout
 * progress, read from the API with the account's bearer token. Static text, no build step; the script is a separate
 * file so the page's Content-Security-Policy allows no inline script, and every value reaches the page as text
 * (textContent), never as markup.
 */
export const CONSOLE_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export const CONSOLE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Bulwark fleet</title>
<link rel="stylesheet" href="/fleet/console.css">
<script src="/fleet/console.js" defer></script>
</head>
<body>
<header><h1>Bulwark fleet</h1><button id="sign-out" hidden>Sign out</button></header>
<form id="sign-in">
  <label>Username <input name="username" autocomplete="username" required></label>
  <label>Password <input name="password" type="password" autocomplete="current-password" required></label>
  <button type="submit">Sign in</button>
  <p id="sign-in-error" role="alert"></p>
</form>
<main id="fleet" hidden>
  <section><h2>Summary</h2><p id="summary"></p></section>
  <section><h2>Appliances</h2>
    <table id="appliances"><thead><tr><th>Name</th><th>Version</th><th>Health</th><th>Connected</th><th>Last seen</th><th>Revision (applied / desired)</th><th>Drift</th></tr></thead><tbody></tbody></table>
    <p><button id="previous">Previous</button> <span id="page"></span> <button id="next">Next</button></p>
  </section>
  <section><h2>Rollouts</h2>
    <table id="rollouts"><thead><tr><th>Created</th><th>State</th><th>Waves (applied / size)</th><th>Applied</th><th>Failed</th><th>Halted because</th></tr></thead><tbody></tbody></table>
  </section>
</main>
</body>
</html>
`;

export const CONSOLE_CSS = `body{font:14px system-ui,sans-serif;margin:1.5rem;color:#1d2430}
header{display:flex;gap:1rem;align-items:center}h1{font-size:1.3rem}
table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid #d6dae1;padding:.3rem .5rem;text-align:left}
.bad{color:#a1261d}.ok{color:#1b6b35}form label{display:block;margin:.4rem 0}
`;

export const CONSOLE_JS = `'use strict';
const PAGE = 50;
let offset = 0;
let timer = null;
const $ = (id) => document.getElementById(id);
const token = () => sessionStorage.getItem('bulwark-fleet-token');

async function api(path) {
  const response = await fetch(path, { headers: { authorization: 'Bearer ' + token() } });
  if (response.status === 401) { signOut(); throw new Error('signed out'); }
  if (!response.ok) throw new Error(path + ': HTTP ' + response.status);
  return { body: await response.json(), total: Number(response.headers.get('x-total-count') || 0) };
}

function cell(row, text, className) {
  const td = document.createElement('td');
  td.textContent = text === null || text === undefined ? '' : String(text);
  if (className) td.className = className;
  row.appendChild(td);
}

function fill(tbody, items, render) {
  tbody.replaceChildren(...items.map((item) => { const row = document.createElement('tr'); render(row, item); return row; }));
}

async function refresh() {
  const [summary, appliances, rollouts] = await Promise.all([
    api('/api/v1/fleet/summary'), api('/api/v1/appliances?limit=' + PAGE + '&offset=' + offset), api('/api/v1/rollouts?limit=10'),
  ]);
  const s = summary.body;
  $('summary').textContent = s.appliances + ' appliances, ' + s.connected + ' connected, ' + s.in_sync + ' in sync, ' + s.drifted + ' drifted, ' + s.revoked + ' revoked';
  fill($('appliances').tBodies[0], appliances.body, (row, a) => {
    row.dataset.id = a.id;
    cell(row, a.name);
    cell(row, a.version);
    cell(row, a.health ? a.health.status + (a.health.failing_assertions.length ? ' (' + a.health.failing_assertions.join(', ') + ')' : '') : 'unknown', a.health && a.health.status === 'ok' ? 'ok' : 'bad');
    cell(row, a.revoked_at ? 'revoked' : a.connected ? 'yes' : 'no', a.connected ? 'ok' : 'bad');
    cell(row, a.last_seen ? new Date(a.last_seen).toLocaleString() : 'never');
    cell(row, a.applied_revision + ' / ' + a.desired_revision, a.in_sync ? 'ok' : 'bad');
    cell(row, a.drift.map((d) => d.section + ' ' + d.name + ' ' + d.kind).join('; '), a.drifted ? 'bad' : '');
  });
  $('page').textContent = appliances.total ? (offset + 1) + '-' + Math.min(offset + PAGE, appliances.total) + ' of ' + appliances.total : 'none';
  $('previous').disabled = offset === 0;
  $('next').disabled = offset + PAGE >= appliances.total;
  fill($('rollouts').tBodies[0], rollouts.body, (row, r) => {
    row.dataset.id = r.id;
    cell(row, new Date(r.created_at).toLocaleString());
    cell(row, r.state, r.state === 'halted' ? 'bad' : r.state === 'completed' ? 'ok' : '');
    cell(row, r.waves.map((w) => w.applied + '/' + w.size).join(' → '));
    cell(row, r.applied + ' of ' + r.targets + (r.cancelled ? ', ' + r.cancelled + ' cancelled by the halt' : ''));
    cell(row, r.failed, r.failed ? 'bad' : '');
    cell(row, r.halted_reason);
  });
}

function show(signedIn) {
  $('sign-in').hidden = signedIn;
  $('fleet').hidden = !signedIn;
  $('sign-out').hidden = !signedIn;
  if (timer) clearInterval(timer);
  timer = null;
  if (signedIn) {
    refresh().catch(() => undefined);
    timer = setInterval(() => refresh().catch(() => undefined), 5000);
  }
}

function signOut() {
  sessionStorage.removeItem('bulwark-fleet-token');
  show(false);
}

document.addEventListener('DOMContentLoaded', () => {
  $('sign-in').addEventListener('submit', async (event) => {
    event.preventDefault();
    const form = new FormData(event.target);
    const response = await fetch('/api/v1/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username: form.get('username'), password: form.get('password') }) });
    const body = await response.json().catch(() => ({}));
    if (!response.ok) { $('sign-in-error').textContent = body.error || 'sign-in failed'; return; }
    $('sign-in-error').textContent = '';
    sessionStorage.setItem('bulwark-fleet-token', body.token);
    show(true);
  });
  $('sign-out').addEventListener('click', () => { fetch('/api/v1/auth/logout', { method: 'POST', headers: { authorization: 'Bearer ' + token() } }).catch(() => undefined); signOut(); });
  $('previous').addEventListener('click', () => { offset = Math.max(0, offset - PAGE); refresh().catch(() => undefined); });
  $('next').addEventListener('click', () => { offset += PAGE; refresh().catch(() => undefined); });
  show(Boolean(token()));
});
`;
