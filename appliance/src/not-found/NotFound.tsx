import { Link } from '../router/router';
import { HOME } from '../routes';

export function NotFound() {
  return (
    <section class="page">
      <h1 tabIndex={-1}>Page not found</h1>
      <p>
        There is no page at this address. <Link href={HOME}>Go to the chat</Link>.
      </p>
    </section>
  );
}
