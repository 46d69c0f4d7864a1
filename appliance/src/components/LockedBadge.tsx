import type { Tier } from '../api/types';

/** "ENTERPRISE" beside a feature this plan does not include; screen readers hear that it is locked. */
export function LockedBadge({ tier }: { tier: Tier }) {
  return (
    <span class="badge badge-locked" title={`Needs the ${tier} plan`}>
      <span class="visually-hidden">, locked: needs </span>
      {tier}
    </span>
  );
}
