import type { Role, Tier } from '../api/types';
import { Link } from '../router/router';
import { HOME } from '../routes';

/** Shown instead of a page the signed-in role may not open. */
export function RoleRequired({ title, role }: { title: string; role: Role }) {
  return (
    <section class="page">
      <h1 tabIndex={-1}>{title}</h1>
      <p>This page needs the {role} role. <Link href={HOME}>Back to the chat</Link>.</p>
    </section>
  );
}

/** Shown instead of a page whose feature the plan does not include. */
export function TierRequired({ title, tier }: { title: string; tier: Tier }) {
  return (
    <section class="page">
      <h1 tabIndex={-1}>{title}</h1>
      <p class="locked">
        <span class="badge badge-locked">{tier}</span> This feature needs the {tier} plan. An admin can apply a licence on the Licence page.
      </p>
    </section>
  );
}
