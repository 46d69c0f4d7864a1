import { AccessDialog } from './AccessDialog';
import { type AccessSource, getSourceAccess, setSourceAccess } from './api';

const WORDS: Record<AccessSource, { item: string; run: string; subject: string }> = {
  connectors: { item: 'document', run: 'scans', subject: "this connector's documents" },
  integrations: { item: 'page', run: 'syncs', subject: "this website's documents" },
};

interface Props {
  source: AccessSource;
  /** The connector or integration: its id, name (text) and how many documents it brought in. */
  target: { id: string; name: string; document_count: number };
  /** Saved: what to tell the reader. */
  onSaved: (notice: string) => void;
  onClose: () => void;
}

/** A source's allowed groups: the service sets them on every document it brought in, and on those it brings in later. */
export function SourceAccessDialog({ source, target, onSaved, onClose }: Props) {
  const words = WORDS[source];
  return (
    <AccessDialog
      title={`Access to ${target.name}`}
      subject={words.subject}
      current={async () => (await getSourceAccess(source, target.id)).groups}
      save={(groups) => setSourceAccess(source, target.id, groups)}
      onClose={onClose}
      onSaved={(saved) => onSaved(`The documents of ${target.name}, now and later, may be read by: ${saved.groups.join(', ')}.`)}
    >
      <p>
        This applies to every {words.item} <strong class="untrusted">{target.name}</strong> brought in ({target.document_count} now), replacing the groups set on any of them one by
        one, and to those its later {words.run} bring in.
      </p>
    </AccessDialog>
  );
}
