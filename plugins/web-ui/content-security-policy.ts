/**
 * The web UI's policy: scripts, styles, fonts and workers only from this origin, never inline (Vite's build
 * has no inline script or style; the UI sets styles through the CSSOM, which CSP allows); images also from
 * data: and blob: (the TOTP QR code, a logo preview, pdf.js); fetches only to this origin. Nothing may frame
 * the UI, and no <base> or plug-in can redirect it.
 */
export function uiContentSecurityPolicy({ upgradeInsecureRequests }: { upgradeInsecureRequests: boolean }): string {
  const directives = [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: blob:",
    "font-src 'self'",
    "connect-src 'self'",
    "worker-src 'self'",
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "object-src 'none'",
    // Without TLS, upgrading requests would break the UI on a plain-HTTP LAN.
    ...(upgradeInsecureRequests ? ['upgrade-insecure-requests'] : []),
  ];
  return directives.join('; ');
}
