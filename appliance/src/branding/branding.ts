import { api } from '../api/client';
import type { Branding } from '../api/types';
import { createStore } from '../store';

/** The admin's branding, applied across the UI and the sign-in page. Every field is untrusted text. */
export const DEFAULT_BRANDING: Branding = {
  app_name: 'Hearth',
  tagline: '',
  primary_color: '#C2410C',
  accent_color: '#1F2937',
  login_message: '',
  logo_url: null,
  updated_at: null,
};

export const branding = createStore<Branding>(DEFAULT_BRANDING);

export const HEX = /^#[0-9a-f]{6}$/i;

/** Relative luminance (WCAG 2) of a #RRGGBB colour. */
function luminance(hex: string): number {
  const channel = (offset: number) => {
    const value = parseInt(hex.slice(offset, offset + 2), 16) / 255;
    return value <= 0.03928 ? value / 12.92 : ((value + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
}

/** Black or white, whichever reads better on the colour: a light brand colour still gets legible text. */
export const textOn = (hex: string) => (luminance(hex) > 0.179 ? '#000000' : '#FFFFFF');

/** Colours go in as CSS custom properties through the CSSOM (no style markup), and only if they are #RRGGBB. */
function apply(value: Branding): void {
  const style = document.documentElement.style;
  for (const [name, color] of [['primary', value.primary_color], ['accent', value.accent_color]] as const) {
    const safe = HEX.test(color) ? color : DEFAULT_BRANDING[`${name}_color`];
    style.setProperty(`--${name}`, safe);
    style.setProperty(`--on-${name}`, textOn(safe));
  }
}

export async function loadBranding(): Promise<void> {
  try {
    branding.set({ ...DEFAULT_BRANDING, ...(await api<Branding>('/api/branding')) });
  } catch {
    branding.set(DEFAULT_BRANDING);
  }
}

branding.subscribe(apply);
apply(DEFAULT_BRANDING);

/** The logo of this origin (never a URL from a field), with the update time to pass caches. */
export const logoSrc = (value: Branding) => (value.logo_url ? `/api/branding/logo?v=${encodeURIComponent(value.updated_at ?? '')}` : null);
