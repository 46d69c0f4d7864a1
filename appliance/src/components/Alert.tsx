import type { ComponentChildren } from 'preact';

interface Props {
  kind?: 'error' | 'info' | 'success' | 'warning';
  children: ComponentChildren;
}

/** A message block; errors are announced at once, the rest politely. */
export function Alert({ kind = 'info', children }: Props) {
  return (
    <div class={`alert alert-${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
      {children}
    </div>
  );
}
