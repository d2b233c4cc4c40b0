/**
 * A service that serves ACME certificates (the reverse proxy): told after a certificate was published by hand, so
 * it reloads when it uses that certificate, by reference or through a file the publish wrote. A renewal needs no
 * such call: storing the new material is a model change those services already follow.
 */
export interface CertificateConsumer {
  /** How the publish answer names it (`reverse proxy`). */
  readonly name: string;
  /** Reloads when running and using the certificate; true when it reloaded. Throws the one-line reason of a failed reload. */
  reloadIfServing(certId: string, writtenPaths: string[]): Promise<boolean>;
}

/**
 * The API's own certificate store (src/areas/tls): what a `local-tls-store` export target publishes to. It
 * refuses material the API's TLS policy would not serve (the target's error), stores it, and installs it at
 * once when /settings/tls selects that certificate.
 */
export type LocalTlsStore = (certId: string, material: { cert_pem: string; key_pem: string }) => Promise<void>;
