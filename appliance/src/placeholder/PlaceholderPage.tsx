import type { PageProps } from '../routes';

/** Stands in for a page that is not built yet, so its nav entry and route already exist. */
export default function PlaceholderPage({ route }: PageProps) {
  return (
    <section class="page">
      <h1 tabIndex={-1}>{route.title}</h1>
      <p>This page is not available in the web UI yet. Its API is documented at <a href="/docs">/docs</a>.</p>
    </section>
  );
}
