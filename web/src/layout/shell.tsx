import type { ComponentChildren } from 'preact';
import { useLocation } from 'preact-iso';
import { useSession } from '../auth/session-context';
import { NAV_ITEMS } from './nav-items';
import { PendingBanner } from './pending-banner';

/** The frame of every signed-in page: who is signed in, the main navigation, pending changes, the page. */
export function Shell({ children }: { children: ComponentChildren }) {
  const { me, signOut, can } = useSession();
  const { path } = useLocation();
  const current = (itemPath: string) => (itemPath === '/' ? path === '/' : path === itemPath || path.startsWith(`${itemPath}/`));
  return (
    <div class="shell">
      <header class="topbar">
        <a class="brand" href="/">
          Bulwark
        </a>
        <span class="who">
          {me.username} <span class="role">({me.role ?? 'no role'})</span>
        </span>
        <button type="button" class="secondary" onClick={() => void signOut()}>
          Sign out
        </button>
      </header>
      <nav aria-label="Main">
        <ul>
          {NAV_ITEMS.filter((item) => !item.permission || can(item.permission)).map((item) => (
            <li key={item.path}>
              <a href={item.path} aria-current={current(item.path) ? 'page' : undefined}>
                {item.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main>
        <PendingBanner />
        {children}
      </main>
    </div>
  );
}
