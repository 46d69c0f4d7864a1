import { createHash } from 'node:crypto';

/** The part of the OpenAPI document the reference page reads. */
export interface ReferenceDocument {
  info: { title: string; version: string };
  paths?: Record<string, Record<string, unknown> | undefined>;
}

interface Operation {
  summary?: string;
  description?: string;
  tags?: string[];
  'x-hearth-access'?: 'public' | { public: true; tier: string } | { role: string; tier: string };
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];
const ROLE_LABELS: Record<string, string> = { viewer: 'Any signed-in user', editor: 'Editor or admin', admin: 'Admin' };

const STYLE = `body{font:15px/1.5 system-ui,sans-serif;max-width:70rem;margin:2rem auto;padding:0 1rem;color:#1f2328}
h2{margin-top:2rem;border-bottom:1px solid #d0d7de;text-transform:capitalize}table{border-collapse:collapse;width:100%}
td,th{text-align:left;padding:.35rem .6rem;border-bottom:1px solid #eaeef2;vertical-align:top}code{font-size:.9em}
.m{font-weight:600;font-family:monospace}.pub{color:#1a7f37}.tier{color:#9a6700}`;

/** The page's CSP: no script at all, and only this exact stylesheet (by hash, not 'unsafe-inline'). */
export const REFERENCE_CSP = `default-src 'none'; style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'; base-uri 'none'; form-action 'none'; frame-ancestors 'self'`;

const escape = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

function accessLabel(operation: Operation): string {
  const access = operation['x-hearth-access'];
  if (access === 'public') return '<span class="pub">Public</span>';
  if (!access) return escape(operation.description ?? '');
  const tier = access.tier && access.tier !== 'FREE' ? ` <span class="tier">· ${escape(access.tier)} plan</span>` : '';
  if ('public' in access) return `<span class="pub">Public</span>${tier}`;
  return `${escape(ROLE_LABELS[access.role] ?? access.role)}${tier}`;
}

/** The human-readable API reference: every documented operation with method, path, summary and access. */
export function renderReference(doc: ReferenceDocument, interactive: boolean): string {
  const groups = new Map<string, string[]>();
  for (const [path, item] of Object.entries(doc.paths ?? {}).sort(([a], [b]) => a.localeCompare(b))) {
    for (const method of METHODS) {
      const operation = item?.[method] as Operation | undefined;
      if (!operation) continue;
      const tag = operation.tags?.[0] ?? 'other';
      const row = `<tr><td class="m">${method.toUpperCase()}</td><td><code>${escape(path)}</code></td><td>${escape(operation.summary ?? '')}</td><td>${accessLabel(operation)}</td></tr>`;
      groups.set(tag, [...(groups.get(tag) ?? []), row]);
    }
  }
  const sections = [...groups].map(
    ([tag, rows]) => `<h2>${escape(tag)}</h2><table><thead><tr><th>Method</th><th>Path</th><th>Summary</th><th>Access</th></tr></thead><tbody>${rows.join('')}</tbody></table>`,
  );
  const links = interactive
    ? '<p>Interactive references: <a href="/api/swagger">Swagger UI</a>, <a href="/api/redoc">ReDoc</a>, machine-readable <a href="/api/openapi.json">OpenAPI document</a>.</p>'
    : '<p>The interactive references (/api/swagger, /api/redoc) and /api/openapi.json are off; an admin enables them with ENABLE_API_DOCS=1.</p>';
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escape(doc.info.title)} API reference</title><style>${STYLE}</style></head><body>
<h1>${escape(doc.info.title)} API reference <small>${escape(doc.info.version)}</small></h1>
<p>Every endpoint takes and returns JSON. Protected endpoints need the header <code>Authorization: Bearer &lt;access token&gt;</code>, obtained from <code>POST /api/auth/login</code>. Every error has the shape <code>{"error": {"code", "message", "field"?}}</code>.</p>
${links}
${sections.join('\n')}
</body></html>`;
}
