import { useEffect, useRef, useState } from 'preact/hooks';
import { useSession } from '../auth/session-context';
import type { Pending } from '../api/types';
import { PendingFeed } from './pending-feed';

export interface PendingReport {
  pending: Pending | null;
  error: string | null;
}

/** The pending report of this session, live from the event stream (polled while it is down). */
export function usePendingReport(onConfigChange: () => void): PendingReport {
  const { api } = useSession();
  const [report, setReport] = useState<PendingReport>({ pending: null, error: null });
  const configChanged = useRef(onConfigChange);
  configChanged.current = onConfigChange;
  useEffect(() => {
    const feed = new PendingFeed(api, {
      report: (pending) => setReport((current) => ({ ...current, pending })),
      error: (error) => setReport((current) => ({ ...current, error })),
      configMayHaveChanged: () => configChanged.current(),
    });
    feed.start();
    const unsubscribe = api.onWrite(() => feed.writeMade());
    return () => {
      unsubscribe();
      feed.stop();
    };
  }, [api]);
  return report;
}
