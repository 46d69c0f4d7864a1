interface Props {
  label: string;
  value: number;
  max: number;
  /** The figures in words, e.g. "120 of 500 documents". */
  text: string;
}

/** How much of a limit is used, as a bar with its figures; it turns to the warning colour past 90 %. */
export function Meter({ label, value, max, text }: Props) {
  const id = `meter-${label.replace(/\W+/g, '-').toLowerCase()}`;
  return (
    <div class="meter-field">
      <div class="meter-line">
        <span id={id} class="label">
          {label}
        </span>
        <span class="muted">{text}</span>
      </div>
      <meter class="meter" min={0} max={max} value={Math.min(value, max)} high={max * 0.9} optimum={0} aria-labelledby={id} aria-valuetext={text} />
    </div>
  );
}
