interface Props {
  label: string;
  /** 0..1, or null while the amount is unknown. */
  value: number | null;
}

export function ProgressBar({ label, value }: Props) {
  return value === null ? <progress class="progress" aria-label={label} /> : <progress class="progress" aria-label={label} max={1} value={value} />;
}
