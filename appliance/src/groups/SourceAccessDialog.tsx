import { AccessDialog } from './AccessDialog';
import { type AccessSource, getSourceAccess, setSourceAccess } from './api';

const WORDS: Record<AccessSource, { item: string; run: string; subject: string }> = {
  connectors: { item: 'document', run: 'scans', subject: 'this connector and its documents' },
  integrations: { item: 'page', run: 'syncs', subject: 'this website and its documents' },
};

interface Props {
  source: AccessSource;
  /** The connector or integration: its id, name (text) and how many documents it brought in. */
  target: { id: string; name: string; document_count: number };
  /** Saved: what to tell the reader. */
  onSaved: (notice: string) => void;
  onClose: () => void;
}

/**
 * A source's allowed groups: the service sets them on every document it brought in, and on those it brings in later;
 * the source itself is then listed only to members of one of them.
 */
export function SourceAccessDialog({ source, target, onSaved, onClose }: Props) {
  const words = WORDS[source];
  return (
    <AccessDialog
      title={`Access to ${target.name}`}
      subject={words.subject}
      current={async () => (await getSourceAccess(source, target.id)).groups}
      save={(groups) => setSourceAccess(source, target.id, groups)}
      onClose={onClose}
      onSaved={(saved, stillReadable) =>
        onSaved(
          `The documents of ${target.name}, now and later, may be read by: ${saved.groups.join(', ')}.` +
            (stillReadable ? '' : ` You are in none of these groups, so ${target.name} is no longer listed for you.`),
        )
      }
    >
      <p>
        This applies to every {words.item} <strong class="untrusted">{target.name}</strong> brought in ({target.document_count} now), replacing the groups set on any of them one by
        one, and to those its later {words.run} bring in.
      </p>
    </AccessDialog>
  );
}
