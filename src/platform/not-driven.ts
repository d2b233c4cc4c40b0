import { unavailable } from '../core/errors.js';

/**
 * A capability whose real driver on this platform arrives with its area's daemon issue: every call answers
 * 503 naming what is missing, never a pretended success.
 */
export function notDriven<T extends object>(platform: string, capability: string): T {
  return new Proxy({} as T, {
    get: (_target, property) => {
      if (property === 'then') return undefined;
      return async () => {
        throw unavailable(`${capability} is not driven on the ${platform} platform yet (${String(property)})`);
      };
    },
  });
}
