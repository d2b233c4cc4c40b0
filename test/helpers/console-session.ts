import assert from 'node:assert/strict';
import type { Locator, Page } from 'playwright-core';
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

/** The page's document, as far as the checks below (run in the browser) use it; this Node program has no DOM types. */
declare const document: {
  querySelectorAll(selector: string): Iterable<{ labels: { length: number } | null; textContent: string | null; getAttribute(name: string): string | null }>;
  documentElement: { scrollWidth: number };
  activeElement: { textContent: string | null } | null;
};
declare const getComputedStyle: (element: unknown) => { outlineStyle: string; boxShadow: string };

/** Opens an area from the main navigation and waits until every table of it has loaded. */
export async function openArea(page: Page, name: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true }).click();
  await page.getByRole('heading', { level: 1, name }).waitFor();
  await page.waitForFunction(() => ![...document.querySelectorAll('td.empty')].some((cell) => cell.textContent === 'Loading…'));
}

/** The names of the buttons in the page's main part (what the account is offered). */
export const buttonsOf = async (page: Page): Promise<string[]> => (await page.locator('main').getByRole('button').allTextContents()).map((text) => text.trim());

export function assertNoProblems(watched: { problems: PageProblems }, what: string): void {
  assert.deepEqual(watched.problems.console, [], `${what}: console errors`);
  assert.deepEqual(watched.problems.failedResponses, [], `${what}: failed responses`);
}

/** Every input, select and textarea of the page's main part has a label naming it. */
export async function assertLabelled(page: Page, what: string): Promise<void> {
  const unlabelled = await page.evaluate(() =>
    [...document.querySelectorAll('main input, main select, main textarea')].filter((field) => !field.labels || field.labels.length === 0).map((field) => field.getAttribute('name')),
  );
  assert.deepEqual(unlabelled, [], `${what}: fields without a label`);
}

/** Neither 1280×800 nor a phone's width scrolls the page sideways (wide tables scroll inside their box). */
export async function assertFits(page: Page, what: string): Promise<void> {
  for (const viewport of [{ width: 1280, height: 800 }, { width: 390, height: 844 }]) {
    await page.setViewportSize(viewport);
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= viewport.width, `${what} at ${viewport.width}×${viewport.height}: the page is ${width} px wide`);
  }
  await page.setViewportSize({ width: 1280, height: 800 });
}

/**
 * The refusals a step provoked on purpose (`"400 /api/v1/…"`), shown in the page: exactly those failed responses,
 * and no console error but the browser's own line for each of their statuses.
 */
export function assertOnlyRefused(watched: { problems: PageProblems }, expected: string[], what: string): void {
  assert.deepEqual(watched.problems.failedResponses.map((r) => `${r.status} ${new URL(r.url).pathname}`), expected, `${what}: failed responses`);
  const statuses = new Set(expected.map((line) => line.split(' ')[0]));
  const browserLine = /^Failed to load resource: the server responded with a status of (\d+)/;
  assert.deepEqual(watched.problems.console.filter((text) => !statuses.has(browserLine.exec(text)?.[1] ?? '')), [], `${what}: console errors`);
  forgetExpectedProblems(watched.problems);
}

/**
 * The API's 400 naming a field is shown at that field (issue 34's quality bar): the input labelled `label` is
 * marked invalid, described by the message and focused, and the form shows no other alert.
 */
export async function assertRefusedAtField(form: Locator, label: string, message: RegExp, what: string): Promise<void> {
  const field = form.getByLabel(label, { exact: true });
  const alert = form.getByRole('alert');
  await alert.first().waitFor();
  assert.equal(await alert.count(), 1, `${what}: one message, at the field`);
  assert.match((await alert.textContent()) ?? '', message, `${what}: the API's message`);
  assert.equal(await field.getAttribute('aria-invalid'), 'true', `${what}: ${label} is marked invalid`);
  const describedBy = ((await field.getAttribute('aria-describedby')) ?? '').split(' ');
  assert.ok(describedBy.includes((await alert.getAttribute('id')) ?? '-'), `${what}: the message describes ${label}`);
  assert.ok(await field.evaluate((element) => element === element.ownerDocument.activeElement), `${what}: ${label} has the focus`);
}

/** Tabs from where the focus is until `name` is focused (at most `limit` presses), with a visible focus ring. */
export async function tabTo(page: Page, name: string, limit = 30): Promise<void> {
  for (let presses = 0; presses < limit; presses++) {
    await page.keyboard.press('Tab');
    const focused = await page.evaluate(() => document.activeElement?.textContent?.trim() ?? '');
    if (focused === name) {
      const ring = await page.evaluate(() => {
        const style = getComputedStyle(document.activeElement);
        return style.outlineStyle !== 'none' || style.boxShadow !== 'none';
      });
      assert.ok(ring, `${name}: the focused control shows its focus`);
      return;
    }
  }
  assert.fail(`${name} is not reached by Tab within ${limit} presses`);
}

