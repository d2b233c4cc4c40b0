import type { Page } from 'playwright-core';
import type { PageProblems } from './console-browser.js';

/** Signs in through the console's own form. */
export async function signIn(page: Page, username: string, password: string): Promise<void> {
  await page.goto('/login');
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('navigation', { name: 'Main' }).waitFor();
}

export interface ApiAnswer {
  status: number;
  json: any;
}

/** The API with one account's bearer token (setting up and checking, not what the browser does). */
export async function apiAs(baseUrl: string, credentials: { username: string; password: string }): Promise<(method: string, path: string, body?: unknown) => Promise<ApiAnswer>> {
  const login = await fetch(`${baseUrl}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(credentials) });
  const { access_token } = (await login.json()) as { access_token: string };
  return async (method, path, body) => {
    const response = await fetch(`${baseUrl}/api/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${access_token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, json: response.status === 204 ? null : await response.json() };
  };
}

/** Forgets what a test provoked on purpose (an API 400 it asserts), so only unexpected problems remain. */
export function forgetExpectedProblems(problems: PageProblems): void {
  problems.console.length = 0;
  problems.failedResponses.length = 0;
}
