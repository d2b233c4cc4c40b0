import { Page } from '../components/page';

export function NotFoundPage() {
  return (
    <Page title="Page not found">
      <p>
        There is no console page at this address. Choose an area in the navigation, or go to the <a href="/">dashboard</a>.
      </p>
    </Page>
  );
}
