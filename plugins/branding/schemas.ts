/**
 * Branding record (GET /api/branding, PUT /api/branding):
 *
 * | Field         | Type            | Rules                          | Default     |
 * |---------------|-----------------|--------------------------------|-------------|
 * | app_name      | string          | 1..64 chars, not only spaces   | "Hearth"    |
 * | tagline       | string          | 0..200 chars                   | ""          |
 * | primary_color | string          | #RRGGBB, returned upper case   | "#C2410C"   |
 * | accent_color  | string          | #RRGGBB, returned upper case   | "#1F2937"   |
 * | login_message | string          | 0..1000 chars, shown on login  | ""          |
 * | logo_url      | string or null  | response only                  | null        |
 * | updated_at    | string or null  | response only, ISO 8601        | null        |
 *
 * PUT replaces the whole configuration: an omitted field returns to its default, an unknown one is 400.
 * logo_url is "/api/branding/logo" once a logo is uploaded. updated_at is the later of the last PUT
 * and the last logo upload (null while branding was never changed).
 *
 * Logo (POST /api/branding/logo, multipart/form-data, one part named `file`, at most 2 MiB):
 * PNG, JPEG, WebP, GIF (first frame) or SVG; stored as a PNG of at most 512x512, metadata stripped.
 * 413 too large or extra parts, 415 not a supported image, 422 image_too_large (over 4096x4096 pixels).
 */
import { Type, type Static } from 'typebox';

export const BRANDING_DEFAULTS = {
  app_name: 'Hearth',
  tagline: '',
  primary_color: '#C2410C',
  accent_color: '#1F2937',
  login_message: '',
} as const;

export const LOGO_URL = '/api/branding/logo';

const Color = (fallback: string) => Type.String({ pattern: '^#[0-9A-Fa-f]{6}$', default: fallback, description: '#RRGGBB' });

const brandingFields = {
  app_name: Type.String({ minLength: 1, maxLength: 64, pattern: '\\S', default: BRANDING_DEFAULTS.app_name }),
  tagline: Type.String({ maxLength: 200, default: BRANDING_DEFAULTS.tagline }),
  primary_color: Color(BRANDING_DEFAULTS.primary_color),
  accent_color: Color(BRANDING_DEFAULTS.accent_color),
  login_message: Type.String({ maxLength: 1000, default: BRANDING_DEFAULTS.login_message }),
};

export const BrandingBody = Type.Object(
  {
    app_name: Type.Optional(brandingFields.app_name),
    tagline: Type.Optional(brandingFields.tagline),
    primary_color: Type.Optional(brandingFields.primary_color),
    accent_color: Type.Optional(brandingFields.accent_color),
    login_message: Type.Optional(brandingFields.login_message),
  },
  { additionalProperties: false, description: 'The whole branding configuration; omitted fields return to their defaults' },
);
export type BrandingBody = Static<typeof BrandingBody>;

export const BrandingView = Type.Object(
  {
    ...brandingFields,
    logo_url: Type.Union([Type.Literal(LOGO_URL), Type.Null()]),
    updated_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { $id: 'Branding' },
);
export type BrandingView = Static<typeof BrandingView>;

/** What is kept in app.settings under BRANDING_SETTING; updated_at in epoch ms. */
export type StoredBranding = Required<BrandingBody> & { updated_at: number };
