// The page served in place of the dashboard when admin-ui/dist has not been built.
export const MISSING_BUILD_HTML = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Relay: dashboard not built</title>
<style>body{font:15px/1.6 system-ui,sans-serif;max-width:40rem;margin:15vh auto;padding:0 1rem;color:#111827}code{background:#f1f3f6;padding:.1em .35em;border-radius:4px}</style>
</head>
<body>
<h1>The dashboard has not been built</h1>
<p>Relay's control API is running, but the admin dashboard's files are missing.</p>
<p>Build them with <code>npm run build:ui</code> (it also runs on <code>npm install</code>), then reload this page. No restart is needed.</p>
</body>
</html>
`;
