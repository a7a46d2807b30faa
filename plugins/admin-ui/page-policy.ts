// The content-security-policy of the dashboard's page, which replaces the control listener's
// run-nothing default (core/control/security-headers.ts) on the answers that are HTML. The build
// is self-contained (no CDN, no inline script or style), so the page loads and runs only files of
// its own origin: a string that ever reached the page as markup could run no script of its own.
export const DASHBOARD_CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  // The favicon is a data: URI in index.html.
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** The page shown until the dashboard is built: its one style is inline. */
export const PLACEHOLDER_CONTENT_SECURITY_POLICY = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'";
