import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { ApiClient } from '../api/client';
import type { Me } from '../api/types';

export interface SessionValue {
  api: ApiClient;
  me: Me;
  /** Whether the signed-in user holds a permission: writes they may not make are not offered. */
  can(permission: string): boolean;
  signOut(): Promise<void>;
}

export const SessionContext = createContext<SessionValue | null>(null);

export function useSession(): SessionValue {
  const value = useContext(SessionContext);
  if (!value) throw new Error('useSession outside a signed-in page');
  return value;
}
