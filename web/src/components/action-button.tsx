import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { messageOf } from './error-alert';

/**
 * A button that runs one API call, disables itself meanwhile, and reports a failure through `onError`
 * (the section shows it in its alert).
 */
export function ActionButton({ run, onDone, onError, children, tone = 'secondary' }: {
  run(): Promise<unknown>;
  onDone?: () => void;
  onError(message: string | null): void;
  children: ComponentChildren;
  tone?: 'primary' | 'secondary' | 'danger';
}) {
  const [busy, setBusy] = useState(false);
  const click = async () => {
    setBusy(true);
    onError(null);
    try {
      await run();
      onDone?.();
    } catch (failure) {
      onError(messageOf(failure));
    } finally {
      setBusy(false);
    }
  };
  return (
    <button type="button" class={tone === 'primary' ? undefined : tone} disabled={busy} onClick={click}>
      {children}
    </button>
  );
}
