import type { ComponentChildren } from 'preact';

/** Errors are announced: screen readers and the tests find them by role="alert". */
export function ErrorAlert({ message }: { message: string | null | undefined }) {
  if (!message) return null;
  return (
    <p class="alert" role="alert">
      {message}
    </p>
  );
}

export function Notice({ children }: { children: ComponentChildren }) {
  return (
    <p class="notice" role="status">
      {children}
    </p>
  );
}

export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
