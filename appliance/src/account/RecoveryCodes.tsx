import { useState } from 'preact/hooks';
import { Alert } from '../components/Alert';
import { saveBlob } from '../sources/api';

/** Copies through the Clipboard API where the page may use it (HTTPS or localhost), else through a selected textarea. */
async function copyText(text: string): Promise<boolean> {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // fall back below
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.className = 'visually-hidden';
  document.body.append(area);
  area.select();
  const copied = document.execCommand('copy');
  area.remove();
  return copied;
}

interface Props {
  codes: string[];
  onDone: () => void;
}

/** The recovery codes, shown this once: copy or download them before leaving. */
export function RecoveryCodes({ codes, onDone }: Props) {
  const [copied, setCopied] = useState<boolean | null>(null);
  const text = `${codes.join('\n')}\n`;
  return (
    <div class="stack">
      <Alert kind="warning">
        Save these recovery codes now: they are shown only this once. Each signs you in once if you lose your authenticator.
      </Alert>
      <ol class="recovery-codes" aria-label="Recovery codes">
        {codes.map((code) => (
          <li key={code}>
            <code>{code}</code>
          </li>
        ))}
      </ol>
      <div class="actions">
        <button type="button" class="button-secondary" onClick={async () => setCopied(await copyText(text))}>
          Copy the codes
        </button>
        <button type="button" class="button-secondary" onClick={() => saveBlob(new Blob([text], { type: 'text/plain' }), 'hearth-recovery-codes.txt')}>
          Download as a file
        </button>
        <button type="button" class="button-primary" onClick={onDone}>
          I have saved them
        </button>
      </div>
      <p role="status" class="hint">
        {copied === true ? 'Copied to the clipboard.' : copied === false ? 'This browser refused to copy; select the codes or download them.' : ''}
      </p>
    </div>
  );
}
