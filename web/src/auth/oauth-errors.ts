/** What each `oauth_error` the single sign-on callback can send means, for the person at the sign-in page. */
export const OAUTH_ERROR_MESSAGES: Record<string, string> = {
  state: 'The sign-in attempt expired or was started in another browser. Please try again.',
  exchange: 'The identity provider could not confirm the sign-in (the code exchange failed). Try again, or ask an administrator to check the provider settings.',
  userinfo: 'The identity provider did not return your profile. Try again, or ask an administrator to check the provider settings.',
  no_account: 'No account on this appliance matches your identity, and accounts are not created automatically. Ask an administrator to create one.',
  disabled: 'This sign-in method or your account is disabled.',
  denied: 'The sign-in was cancelled or refused at the identity provider.',
};

export function oauthErrorMessage(code: string): string {
  return OAUTH_ERROR_MESSAGES[code] ?? `Single sign-on failed (${code}). Please try again.`;
}
