import { createHash } from 'node:crypto';
import { clock } from '../../core/clock.js';
import { notFound } from '../../core/errors.js';
import type { SettingsStore } from '../../core/settings/store.js';
import { normaliseLogo } from './logo-image.js';
import type { BrandingLogoRepository } from './repository.js';
import { BRANDING_DEFAULTS, type BrandingBody, type BrandingView, LOGO_URL, type StoredBranding } from './schemas.js';

/** The whole configuration is one settings key, so a PUT is one atomic write. */
const BRANDING_SETTING = 'branding';

interface LogoFile {
  png: Buffer;
  etag: string;
}

/** Branding rules: whole-record replacement with defaults, and the one normalised logo. */
export class BrandingService {
  constructor(private readonly settings: SettingsStore, private readonly logos: BrandingLogoRepository) {}

  async get(): Promise<BrandingView> {
    const stored = this.settings.get<Partial<StoredBranding> | null>(BRANDING_SETTING, null);
    const logoUpdatedAt = await this.logos.updatedAt();
    const updatedAt = Math.max(stored?.updated_at ?? 0, logoUpdatedAt ?? 0);
    return {
      app_name: stored?.app_name ?? BRANDING_DEFAULTS.app_name,
      tagline: stored?.tagline ?? BRANDING_DEFAULTS.tagline,
      primary_color: stored?.primary_color ?? BRANDING_DEFAULTS.primary_color,
      accent_color: stored?.accent_color ?? BRANDING_DEFAULTS.accent_color,
      login_message: stored?.login_message ?? BRANDING_DEFAULTS.login_message,
      logo_url: logoUpdatedAt === undefined ? null : LOGO_URL,
      updated_at: updatedAt > 0 ? clock.iso(updatedAt) : null,
    };
  }

  async replace(input: BrandingBody): Promise<BrandingView> {
    const next: StoredBranding = {
      app_name: input.app_name ?? BRANDING_DEFAULTS.app_name,
      tagline: input.tagline ?? BRANDING_DEFAULTS.tagline,
      primary_color: (input.primary_color ?? BRANDING_DEFAULTS.primary_color).toUpperCase(),
      accent_color: (input.accent_color ?? BRANDING_DEFAULTS.accent_color).toUpperCase(),
      login_message: input.login_message ?? BRANDING_DEFAULTS.login_message,
      updated_at: clock.now(),
    };
    await this.settings.set({ [BRANDING_SETTING]: next });
    return this.get();
  }

  async logo(): Promise<LogoFile> {
    const row = await this.logos.find();
    if (!row) throw notFound('Logo');
    const png = Buffer.from(row.png);
    return { png, etag: `"${createHash('sha256').update(png).digest('base64url').slice(0, 27)}"` };
  }

  /** Only a fully decoded and re-encoded image reaches the table; any refusal leaves the old logo. */
  async setLogo(upload: Buffer): Promise<BrandingView> {
    const logo = await normaliseLogo(upload);
    await this.logos.upsert({ ...logo, updated_at: clock.now() });
    return this.get();
  }
}
