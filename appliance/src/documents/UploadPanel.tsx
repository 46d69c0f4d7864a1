import { useRef, useState } from 'preact/hooks';
import type { DocumentStatus } from '../api/types';
import { formatBytes } from '../components/format';
import { ProgressBar } from '../components/ProgressBar';

export interface UploadItem {
  key: string;
  name: string;
  size: number;
  /** 0..1 of the bytes sent. */
  progress: number;
  state: 'waiting' | 'uploading' | 'rejected' | DocumentStatus;
  /** Why it was refused or why indexing failed (the service's words). */
  message?: string;
  documentId?: string;
}

const STATE_LABEL: Record<UploadItem['state'], string> = {
  waiting: 'Waiting',
  uploading: 'Uploading',
  rejected: 'Refused',
  queued: 'Queued for indexing',
  indexing: 'Indexing',
  indexed: 'Indexed',
  failed: 'Indexing failed',
};

interface Props {
  items: UploadItem[];
  onFiles: (files: File[]) => void;
  onClear: () => void;
}

/** Drop files here, or choose them: each gets a progress bar, then its indexing status until it is done. */
export function UploadPanel({ items, onFiles, onClear }: Props) {
  const [over, setOver] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const take = (list: FileList | null | undefined) => {
    const files = [...(list ?? [])];
    if (files.length) onFiles(files);
  };
  return (
    <section class="upload" aria-labelledby="upload-title">
      <h2 id="upload-title">Upload</h2>
      <div
        class={over ? 'dropzone over' : 'dropzone'}
        onDragOver={(event) => {
          event.preventDefault();
          setOver(true);
        }}
        onDragLeave={() => setOver(false)}
        onDrop={(event) => {
          event.preventDefault();
          setOver(false);
          take(event.dataTransfer?.files);
        }}
      >
        <p>Drop files here: PDF, DOCX, TXT, MD (CSV, XLSX and HTML on PRO).</p>
        <input
          ref={input}
          id="upload-files"
          type="file"
          multiple
          class="visually-hidden"
          onChange={(event) => {
            take(event.currentTarget.files);
            event.currentTarget.value = '';
          }}
        />
        <label for="upload-files" class="button-secondary file-button">
          Choose files
        </label>
      </div>
      {items.length > 0 && (
        <>
          <ul class="upload-list" aria-label="Uploads">
            {items.map((item) => (
              <li key={item.key} class={`upload-item state-${item.state}`}>
                <div class="upload-row">
                  <span class="upload-name">{item.name}</span>
                  <span class="muted">{formatBytes(item.size)}</span>
                  <span class="upload-state">{STATE_LABEL[item.state]}</span>
                </div>
                {(item.state === 'waiting' || item.state === 'uploading') && <ProgressBar label={`Upload of ${item.name}`} value={item.progress} />}
                {(item.state === 'queued' || item.state === 'indexing') && <ProgressBar label={`Indexing of ${item.name}`} value={null} />}
                {item.message && <p class="error-text upload-message">{item.message}</p>}
              </li>
            ))}
          </ul>
          <button type="button" class="button-quiet" onClick={onClear}>
            Clear finished uploads
          </button>
        </>
      )}
    </section>
  );
}
