import { join } from 'node:path';
import type { WebFile } from './bundle-web';

/**
 * What makes the app installable (docs/web.md, "Installable"): the web app manifest, its icons
 * (made from web/public/icon.svg: PNG at 192 and 512 pixels, and a maskable one whose picture
 * keeps to the safe circle), and the service worker that keeps the shell for offline starts.
 */
const THEME = '#1d4f9c';

export async function appShellFiles(webRoot: string, bundled: readonly WebFile[]): Promise<WebFile[]> {
  // Imported here, not at the top: the server imports this module, and loading the image codec at
  // start would unpack it on every start (and fail the start with an unusable TMPDIR) where the
  // compiled binary never bundles the app.
  const { Transformer } = await import('@napi-rs/image');
  const svg = await Bun.file(join(webRoot, 'public', 'icon.svg')).text();
  // The maskable icon: a full square of the background, the picture shrunk into the middle 70%.
  const maskable = svg.replace(' rx="112"', '').replace(/(<path[\s\S]*)<\/svg>$/, '<g transform="translate(77 77) scale(.7)">$1</g></svg>');
  const png = async (source: string, size: number) => Buffer.from(await Transformer.fromSvg(source).resize(size, size).png()).toString('base64');
  const icons: WebFile[] = [
    { path: '/icons/icon.svg', type: 'image/svg+xml', text: svg },
    { path: '/icons/icon-192.png', type: 'image/png', text: await png(svg, 192), base64: true },
    { path: '/icons/icon-512.png', type: 'image/png', text: await png(svg, 512), base64: true },
    { path: '/icons/maskable-512.png', type: 'image/png', text: await png(maskable, 512), base64: true },
  ];
  const manifest = {
    name: 'Parley',
    short_name: 'Parley',
    description: 'Chat, research and group chats with your own AI server.',
    start_url: '/',
    scope: '/',
    display: 'standalone',
    background_color: '#ffffff',
    theme_color: THEME,
    icons: [
      { src: '/icons/icon-192.png', sizes: '192x192', type: 'image/png' },
      { src: '/icons/icon-512.png', sizes: '512x512', type: 'image/png' },
      { src: '/icons/maskable-512.png', sizes: '512x512', type: 'image/png', purpose: 'maskable' },
      { src: '/icons/icon.svg', sizes: 'any', type: 'image/svg+xml' },
    ],
  };
  return [
    ...icons,
    { path: '/manifest.webmanifest', type: 'application/manifest+json', text: JSON.stringify(manifest) },
    { path: '/sw.js', type: 'text/javascript;charset=utf-8', text: serviceWorker(bundled) },
  ];
}

/** The page's head gains the manifest, the icons and the theme colour (written here: Bun's HTML bundler would try to bundle them). */
export function withShellLinks(html: string): string {
  const links = `<link rel="manifest" href="/manifest.webmanifest"><link rel="icon" href="/icons/icon.svg" type="image/svg+xml"><link rel="apple-touch-icon" href="/icons/icon-192.png"><meta name="theme-color" content="${THEME}">`;
  return html.replace(/<link rel="icon" href="data:,"\s*\/?>/, '').replace('</head>', `${links}</head>`);
}

/**
 * The service worker: the shell (the page, its scripts and styles, the lazy chunks) cached at
 * install under a name that changes with the build, so an upgrade replaces it whole. Pages are
 * asked of the network first and answered from the cache only when it fails (offline: the app
 * opens and says so); hashed assets come from the cache. The API is never cached: its answers
 * are the user's data, and they must be current.
 */
function serviceWorker(bundled: readonly WebFile[]): string {
  const shell = ['/', ...bundled.filter((f) => /^\/assets\/.*\.(js|css)$/.test(f.path) && !f.path.startsWith('/assets/katex')).map((f) => f.path)];
  const version = Bun.hash(shell.join('\n')).toString(36);
  return `const CACHE = 'parley-shell-${version}';
const SHELL = ${JSON.stringify(shell)};
self.addEventListener('install', (e) => e.waitUntil(caches.open(CACHE).then((c) => c.addAll(SHELL)).then(() => self.skipWaiting())));
self.addEventListener('activate', (e) => e.waitUntil(caches.keys().then((keys) => Promise.all(keys.filter((k) => k.startsWith('parley-shell-') && k !== CACHE).map((k) => caches.delete(k)))).then(() => self.clients.claim())));
self.addEventListener('fetch', (e) => {
  const req = e.request;
  const url = new URL(req.url);
  if (req.method !== 'GET' || url.origin !== location.origin || url.pathname.startsWith('/api/')) return;
  if (req.mode === 'navigate') return e.respondWith(fetch(req).catch(() => caches.match('/')));
  if (url.pathname.startsWith('/assets/'))
    e.respondWith(caches.match(req).then((hit) => hit || fetch(req).then((res) => {
      if (res.ok) { const copy = res.clone(); caches.open(CACHE).then((c) => c.put(req, copy)); }
      return res;
    })));
});
`;
}
