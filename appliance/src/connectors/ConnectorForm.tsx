import { useState } from 'preact/hooks';
import { Alert } from '../components/Alert';
import { Dialog } from '../components/Dialog';
import { CheckboxField, TextField } from '../components/Field';
import { formErrors } from '../components/form-errors';
import { FormButtons } from '../components/FormButtons';
import { useSubmit } from '../components/useSubmit';
import { type Connector, createConnector, parseExtensions, updateConnector } from './api';

const FIELDS = ['body.name', 'body.path', 'body.recursive', 'body.include', 'body.enabled'];

interface Props {
  /** The connector to edit, or none to create one. */
  connector?: Connector;
  onSaved: (connector: Connector) => void;
  onClose: () => void;
}

/** Create or edit a connector (admin): the fields of POST/PUT /api/connectors. */
export function ConnectorForm({ connector, onSaved, onClose }: Props) {
  const [name, setName] = useState(connector?.name ?? '');
  const [path, setPath] = useState(connector?.path ?? '');
  const [recursive, setRecursive] = useState(connector?.recursive ?? true);
  const [include, setInclude] = useState(connector?.include.join(', ') ?? '');
  const [enabled, setEnabled] = useState(connector?.enabled ?? true);
  const { busy, error, submit } = useSubmit(() => {
    const fields = { name: name.trim(), path: path.trim(), recursive, include: parseExtensions(include), enabled };
    return connector ? updateConnector(connector.id, fields) : createConnector(fields);
  }, onSaved);
  const errors = formErrors(error, FIELDS);
  return (
    <Dialog title={connector ? 'Edit connector' : 'New connector'} onClose={onClose}>
      <form class="stack" onSubmit={submit}>
        {errors.general && <Alert kind="error">{errors.general}</Alert>}
        <TextField label="Name" required maxLength={100} value={name} onValue={setName} error={errors.field('body.name')} />
        <TextField
          label="Folder"
          required
          maxLength={4096}
          value={path}
          onValue={setPath}
          spellcheck={false}
          autoCapitalize="none"
          hint="An absolute path on this box, inside CONNECTOR_ALLOWED_PATHS (for example /app/docs/handbooks)."
          error={errors.field('body.path')}
        />
        <TextField
          label="File types"
          value={include}
          onValue={setInclude}
          spellcheck={false}
          autoCapitalize="none"
          hint="Extensions separated by commas, such as .pdf, .md. Empty: every supported type."
          error={errors.field('body.include')}
        />
        <CheckboxField label="Include subfolders" checked={recursive} onChecked={setRecursive} error={errors.field('body.recursive')} />
        <CheckboxField label="Enabled" checked={enabled} onChecked={setEnabled} hint="A disabled connector refuses scans and is left out of Scan all." error={errors.field('body.enabled')} />
        <FormButtons busy={busy} label={connector ? 'Save changes' : 'Create connector'} onCancel={onClose} />
      </form>
    </Dialog>
  );
}
