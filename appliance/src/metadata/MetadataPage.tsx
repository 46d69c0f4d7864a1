import { useState } from 'preact/hooks';
import { messageOf } from '../api/errors';
import { Alert } from '../components/Alert';
import { CheckboxField, SelectField, TextAreaField, TextField } from '../components/Field';
import { formErrors } from '../components/form-errors';
import { useLoad } from '../components/useLoad';
import { useSubmit } from '../components/useSubmit';
import { roleAtLeast, session } from '../session/session';
import { useStore } from '../store';
import { createRule, deleteRule, listRules, listSources, refreshRules, type Rule, type RuleFields, testRule, type TestResult } from './api';
import { Highlighted } from './Highlighted';
import './metadata.css';

const EMPTY: RuleFields = { field_name: '', pattern: '', query_pattern: null, scope: 'full', level: 'chunk', chunk_boundary: false, priority: 0 };
const FIELDS = ['body.field_name', 'body.pattern', 'body.query_pattern', 'body.scope', 'body.level', 'body.priority'];

/** Metadata rules per source: the list in applying order, a new rule with a live test box, refresh. */
export default function MetadataPage() {
  const { user } = useStore(session);
  const canEdit = roleAtLeast(user?.role, 'editor');
  const sources = useLoad(listSources);
  const [source, setSource] = useState('uploads');
  const rules = useLoad(() => listRules(source), [source]);
  const [notice, setNotice] = useState<string | null>(null);

  return (
    <section class="page stack">
      <div class="page-head">
        <h1 tabIndex={-1}>Metadata rules</h1>
      </div>
      <p class="muted">Each rule extracts a value per document or chunk with a Python regular expression (one capture group). A question that a rule matches searches only the chunks with that value.</p>
      <SelectField label="Source" value={source} onValue={setSource} options={(sources.value ?? [{ id: 'uploads', label: 'Uploaded documents' }]).map((s) => [s.id, s.label] as const)} />
      {rules.error && <Alert kind="error">{rules.error}</Alert>}
      {rules.value && !rules.value.active && <Alert kind="warning">{rules.value.inactive_reason}</Alert>}
      {notice && <Alert kind="success">{notice}</Alert>}
      {rules.value && <RuleTable rules={rules.value.rules} canEdit={canEdit && rules.value.active} source={source} onChanged={rules.reload} />}
      {canEdit && rules.value?.active && (
        <>
          <button type="button" class="button-secondary" onClick={() => void refreshRules(source).then((job) => setNotice(`Refresh started (job ${job.id}): see Jobs for its progress.`), (e) => setNotice(messageOf(e)))}>
            Apply the rules to indexed documents
          </button>
          <NewRule source={source} onCreated={rules.reload} />
        </>
      )}
    </section>
  );
}

function RuleTable({ rules, canEdit, source, onChanged }: { rules: Rule[]; canEdit: boolean; source: string; onChanged: () => void }) {
  if (!rules.length) return <p class="muted">No rules for this source.</p>;
  return (
    <table class="rules-table">
      <thead>
        <tr><th>Field</th><th>Pattern</th><th>Scope</th><th>Level</th><th>Priority</th>{canEdit && <th><span class="visually-hidden">Actions</span></th>}</tr>
      </thead>
      <tbody>
        {rules.map((rule) => (
          <tr key={rule.id}>
            <td>{rule.field_name}</td>
            <td><code>{rule.pattern}</code>{rule.chunk_boundary && <span class="muted"> (chunk boundary)</span>}</td>
            <td>{rule.scope}</td>
            <td>{rule.level}</td>
            <td>{rule.priority}</td>
            {canEdit && (
              <td>
                <button type="button" class="button-link" aria-label={`Delete the ${rule.field_name} rule`} onClick={() => void deleteRule(source, rule.id).then(onChanged)}>Delete</button>
              </td>
            )}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function NewRule({ source, onCreated }: { source: string; onCreated: () => void }) {
  const [fields, setFields] = useState<RuleFields>(EMPTY);
  const [sample, setSample] = useState('');
  const [tested, setTested] = useState<{ text: string; result: TestResult } | null>(null);
  const [testError, setTestError] = useState<string | null>(null);
  const set = <K extends keyof RuleFields>(key: K) => (value: RuleFields[K]) => setFields((current) => ({ ...current, [key]: value }));
  const { busy, error, submit } = useSubmit(() => createRule(source, fields), () => {
    setFields(EMPTY);
    onCreated();
  });
  const errors = formErrors(error, FIELDS);

  const runTest = async () => {
    setTestError(null);
    try {
      setTested({ text: sample, result: await testRule(source, fields.pattern, sample) });
    } catch (caught) {
      setTested(null);
      setTestError(messageOf(caught));
    }
  };

  return (
    <form class="panel stack" onSubmit={submit} aria-labelledby="new-rule-title">
      <h2 id="new-rule-title">New rule</h2>
      {errors.general && <Alert kind="error">{errors.general}</Alert>}
      <TextField label="Field name" value={fields.field_name} onValue={set('field_name')} required error={errors.field('body.field_name')} />
      <TextField label="Pattern" value={fields.pattern} onValue={set('pattern')} required spellcheck={false} hint="Python syntax, one capture group: e.g. (?i)department:\s*(\w+)" error={errors.field('body.pattern')} />
      <TextField label="Question pattern (optional)" value={fields.query_pattern ?? ''} onValue={(value) => set('query_pattern')(value || null)} spellcheck={false} error={errors.field('body.query_pattern')} />
      <SelectField label="Scope" value={fields.scope} onValue={set('scope')} options={[['full', 'Full text'], ['header', 'Header'], ['filename', 'File name']] as const} />
      <SelectField label="Level" value={fields.level} onValue={set('level')} options={[['chunk', 'Each chunk (inherits)'], ['document', 'Whole document']] as const} />
      <TextField label="Priority" type="number" value={String(fields.priority)} onValue={(value) => set('priority')(Number(value) || 0)} error={errors.field('body.priority')} />
      <CheckboxField label="Start a new chunk at each match" checked={fields.chunk_boundary} onChecked={set('chunk_boundary')} />
      <section class="stack" aria-labelledby="test-title">
        <h3 id="test-title">Try the pattern</h3>
        <TextAreaField label="Sample text" value={sample} onValue={setSample} rows={5} />
        <button type="button" class="button-secondary" disabled={!fields.pattern} onClick={() => void runTest()}>Test the pattern</button>
        {testError && <Alert kind="error">{testError}</Alert>}
        {tested && (
          <>
            <p role="status">{tested.result.matched ? `${tested.result.matches.length} match(es); the value stored would be “${tested.result.value}”.` : 'No match.'}</p>
            <Highlighted text={tested.text} result={tested.result} />
          </>
        )}
      </section>
      <button type="submit" class="button-primary" disabled={busy}>{busy ? 'Saving…' : 'Add the rule'}</button>
    </form>
  );
}
