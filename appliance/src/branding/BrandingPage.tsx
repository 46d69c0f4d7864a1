import { useEffect, useId, useState } from 'preact/hooks';
import type { Branding } from '../api/types';
import { Alert } from '../components/Alert';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { TextAreaField, TextField } from '../components/Field';
import { formErrors } from '../components/form-errors';
import { FormButtons } from '../components/FormButtons';
import { ProgressBar } from '../components/ProgressBar';
import { useSubmit } from '../components/useSubmit';
import { useStore } from '../store';
import { type BrandingFields, LOGO_TYPES, saveBranding, uploadLogo } from './api';
import { branding, DEFAULT_BRANDING, HEX, logoSrc, textOn } from './branding';
import './branding-page.css';

const FIELDS = ['body.app_name', 'body.tagline', 'body.primary_color', 'body.accent_color', 'body.login_message'];

function ColorField({ label, value, onValue, error }: { label: string; value: string; onValue: (value: string) => void; error?: string }) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <div class="color-row">
        <input id={id} type="color" value={value} onInput={(event) => onValue(event.currentTarget.value.toUpperCase())} aria-describedby={`${id}-value`} aria-invalid={error ? true : undefined} />
        <code id={`${id}-value`}>{value}</code>
      </div>
      {error && <p class="field-error">{error}</p>}
    </div>
  );
}

/** How the header and the sign-in card will look; every field is a text node, colours go in through the CSSOM. */
function Preview({ fields, logo }: { fields: BrandingFields; logo: string | null }) {
  const accent = HEX.test(fields.accent_color) ? fields.accent_color : DEFAULT_BRANDING.accent_color;
  const primary = HEX.test(fields.primary_color) ? fields.primary_color : DEFAULT_BRANDING.primary_color;
  return (
    <div class="brand-preview" aria-label="Preview" role="group">
      <div class="preview-bar" style={{ background: accent, color: textOn(accent) }}>
        {logo && <img src={logo} alt="" class="brand-logo" />}
        <strong class="preview-name">{fields.app_name || DEFAULT_BRANDING.app_name}</strong>
        {fields.tagline && <span class="preview-tagline">{fields.tagline}</span>}
      </div>
      <div class="preview-card">
        <p class="preview-title">Sign in</p>
        {fields.login_message && <p class="login-message">{fields.login_message}</p>}
        <span class="preview-button" style={{ background: primary, color: textOn(primary) }}>
          Sign in
        </span>
      </div>
    </div>
  );
}

/** The editable fields only: PUT refuses the view's logo_url and updated_at. */
const editable = ({ app_name, tagline, primary_color, accent_color, login_message }: Branding): BrandingFields => ({ app_name, tagline, primary_color, accent_color, login_message });

function BrandingForm({ current }: { current: Branding }) {
  const [fields, setFields] = useState(editable(current));
  const [saved, setSaved] = useState(false);
  const [resetting, setResetting] = useState(false);
  useEffect(() => setFields(editable(current)), [current.updated_at]);
  const set = (name: keyof BrandingFields) => (value: string) => setFields((previous) => ({ ...previous, [name]: value }));
  const applied = (value: Branding) => {
    branding.set({ ...DEFAULT_BRANDING, ...value });
    setSaved(true);
  };
  const { busy, error, submit } = useSubmit(() => (setSaved(false), saveBranding(fields)), applied);
  const errors = formErrors(error, FIELDS);
  return (
    <div class="branding-layout">
      <form class="stack" onSubmit={submit}>
        {errors.general && <Alert kind="error">{errors.general}</Alert>}
        {saved && <Alert kind="success">Saved: the new branding is in use here and on the sign-in page.</Alert>}
        <TextField label="Name" required maxLength={64} value={fields.app_name} onValue={set('app_name')} error={errors.field('body.app_name')} />
        <TextField label="Tagline" maxLength={200} value={fields.tagline} onValue={set('tagline')} hint="Beside the name; up to 200 characters." error={errors.field('body.tagline')} />
        <div class="two-columns">
          <ColorField label="Primary colour (buttons)" value={fields.primary_color} onValue={set('primary_color')} error={errors.field('body.primary_color')} />
          <ColorField label="Accent colour (header)" value={fields.accent_color} onValue={set('accent_color')} error={errors.field('body.accent_color')} />
        </div>
        <TextAreaField label="Sign-in message" rows={4} maxLength={1000} value={fields.login_message} onValue={set('login_message')} hint="Shown above the sign-in form, as plain text; up to 1,000 characters." error={errors.field('body.login_message')} />
        <div class="actions">
          <FormButtons busy={busy} label="Save branding" />
          <button type="button" class="button-quiet" onClick={() => setResetting(true)}>
            Reset to the defaults
          </button>
        </div>
      </form>
      <Preview fields={fields} logo={logoSrc(current)} />
      {resetting && (
        <ConfirmDialog title="Reset the branding?" confirmLabel="Reset" onClose={() => setResetting(false)} onConfirm={async () => applied(await saveBranding({}))}>
          <p>The name, tagline, colours and sign-in message return to Hearth's defaults. The logo stays.</p>
        </ConfirmDialog>
      )}
    </div>
  );
}

function LogoForm({ current }: { current: Branding }) {
  const [file, setFile] = useState<File | null>(null);
  const [preview, setPreview] = useState<string | null>(null);
  const [progress, setProgress] = useState(0);
  const [done, setDone] = useState(false);
  // A new key empties the file input once its file is uploaded.
  const [uploads, setUploads] = useState(0);
  const inputId = useId();
  useEffect(() => {
    if (!file) return setPreview(null);
    // A local preview of the chosen file: a blob: image, which the CSP allows and which runs nothing.
    const url = URL.createObjectURL(file);
    setPreview(url);
    return () => URL.revokeObjectURL(url);
  }, [file]);
  const { busy, error, submit } = useSubmit(
    () => (setDone(false), setProgress(0), uploadLogo(file!, setProgress)),
    (value) => {
      branding.set({ ...DEFAULT_BRANDING, ...value });
      setFile(null);
      setUploads((n) => n + 1);
      setDone(true);
    },
  );
  const errors = formErrors(error, ['body.file']);
  const stored = logoSrc(current);
  return (
    <form class="stack narrow" onSubmit={submit}>
      {(errors.general || errors.field('body.file')) && <Alert kind="error">{errors.general ?? errors.field('body.file')}</Alert>}
      {done && <Alert kind="success">The new logo is in use.</Alert>}
      <div class="logo-row">
        {preview ? <img src={preview} alt="The chosen logo" class="logo-large" /> : stored ? <img src={stored} alt="The current logo" class="logo-large" /> : <p class="muted">No logo yet.</p>}
      </div>
      <div class="field">
        <label for={inputId}>Logo image</label>
        <input key={uploads} id={inputId} type="file" accept={LOGO_TYPES} aria-describedby={`${inputId}-hint`} onChange={(event) => setFile(event.currentTarget.files?.[0] ?? null)} />
        <p class="hint" id={`${inputId}-hint`}>
          PNG, JPEG, WebP, GIF or SVG up to 2 MiB; stored as a PNG of at most 512 × 512 pixels.
        </p>
      </div>
      {busy && <ProgressBar label="Logo upload" value={progress} />}
      <div>
        <button type="submit" class="button-primary" disabled={!file || busy}>
          {busy ? 'Uploading…' : 'Upload logo'}
        </button>
      </div>
    </form>
  );
}

/** Name, colours, tagline, sign-in message and logo (admin), applied across the UI and the sign-in page. */
export default function BrandingPage() {
  const current = useStore(branding);
  return (
    <section class="page stack">
      <h1 tabIndex={-1}>Branding</h1>
      <section class="stack" aria-labelledby="look-title">
        <h2 id="look-title">Name and colours</h2>
        <BrandingForm current={current} />
      </section>
      <section class="stack" aria-labelledby="logo-title">
        <h2 id="logo-title">Logo</h2>
        <LogoForm current={current} />
      </section>
    </section>
  );
}
