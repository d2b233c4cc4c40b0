import type { AppContext } from '../../context.js';
import { EVENT_TOPICS } from '../../core/events.js';

/** How close to expiry a certificate is announced (certificate.expiring). */
export const EXPIRY_WARNING_DAYS = 14;

/** A certificate the appliance holds or serves, whatever made it: an ACME order, the local CA, or a file it was given. */
export interface CertificateValidity {
  id: string;
  /** What an administrator knows it by (its common name, or the name given to an imported file). */
  name: string;
  expires_at: string;
  source: 'acme' | 'local-ca' | 'local-ca-root' | 'file';
}

/** Announces `certificate.expiring` for each certificate that expires within `days` of the service clock; answers how many. */
export function announceExpiring(context: AppContext, certificates: CertificateValidity[], days = EXPIRY_WARNING_DAYS): number {
  const now = context.clock.now();
  let announced = 0;
  for (const certificate of certificates) {
    const expires = Date.parse(certificate.expires_at);
    if (!Number.isFinite(expires) || expires - now > days * 86_400_000) continue;
    context.events.emit(EVENT_TOPICS.certificateExpiring, {
      certificate_id: certificate.id, certificate: certificate.name, source: certificate.source, expires_at: certificate.expires_at,
      days_left: Math.floor((expires - now) / 86_400_000),
    });
    announced++;
  }
  return announced;
}
