import { escapeHtml, prose, referencePageHtml } from '../kit/reference-page.js';

type Json = Record<string, unknown>;


function schemaBlock(schema: unknown): string {
  return `<pre class="lk-codes">${escapeHtml(JSON.stringify(schema, null, 2))}</pre>`;
}

function securityText(security: Json[]): string {
  if (security.length === 0) return 'No authentication: the credentials are in the body.';
  const ways = security.map((requirement) => Object.keys(requirement)[0]);
  const named = ways.filter((way): way is string => way !== undefined).map((way) => (way === 'tokenAuth' ? '<code>Authorization: Token &lt;key&gt;</code>' : 'the session cookie'));
  return `${ways.includes(undefined) ? 'Optional' : 'Required'}: ${named.join(' or ')}.`;
}

function operationHtml(path: string, method: string, operation: Json): string {
  const parameters = (operation.parameters as Json[] | undefined) ?? [];
  const requestBody = operation.requestBody as { content: Record<string, { schema: unknown }> } | undefined;
  const bodyTypes = requestBody ? Object.keys(requestBody.content) : [];
  const responses = Object.entries(operation.responses as Record<string, { description: string; content?: Record<string, { schema: unknown }> }>).map(
    ([status, response]) =>
      `<tr><td>${escapeHtml(status)}</td><td>${prose(response.description)}${response.content ? schemaBlock(response.content['application/json']?.schema) : ''}</td></tr>`,
  );
  return [
    `<section class="lk-section" id="${escapeHtml(String(operation.operationId))}">`,
    `<h3><code>${method.toUpperCase()} ${escapeHtml(path)}</code></h3>`,
    `<p><strong>${prose(String(operation.summary))}.</strong> ${operation.description === operation.summary ? '' : prose(String(operation.description))}</p>`,
    `<p>Authentication: ${securityText(operation.security as Json[])}</p>`,
    parameters.length > 0 ? `<p>Path parameters: ${parameters.map((parameter) => `<code>${escapeHtml(String(parameter.name))}</code>`).join(', ')}</p>` : '',
    requestBody ? `<p>Body (${bodyTypes.map((type) => `<code>${escapeHtml(type)}</code>`).join(' or ')}):</p>${schemaBlock(requestBody.content[bodyTypes[0] ?? '']?.schema)}` : '',
    `<table class="lk-table"><thead><tr><th>status</th><th>response</th></tr></thead><tbody>${responses.join('')}</tbody></table>`,
    '</section>',
  ].join('\n');
}

/**
 * /api/docs/: every operation of the schema, grouped by tag, rendered on the server from the same
 * document /api/schema/ serves. It needs no CDN and no script, and works under the strictest CSP.
 */
export function apiDocsHtml(document: Json, links: { schema: string; stylesheet: string }): string {
  const info = document.info as { title: string; description: string };
  const paths = document.paths as Record<string, Record<string, Json>>;
  const operations = Object.entries(paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]) => ({ path, method, operation })));
  const tags = [...new Set(operations.map(({ operation }) => (operation.tags as string[])[0] ?? 'api'))];
  const sections = tags.map((tag) => {
    const tagged = operations.filter(({ operation }) => ((operation.tags as string[])[0] ?? 'api') === tag);
    return `<h2>${escapeHtml(tag)}</h2>\n${tagged.map(({ path, method, operation }) => operationHtml(path, method, operation)).join('\n')}`;
  });
  return referencePageHtml({
    title: info.title,
    stylesheet: links.stylesheet,
    links: [{ href: links.schema, text: 'OpenAPI schema (JSON)' }],
    introduction: `<p>${prose(info.description)} Authenticate with <code>Authorization: Token &lt;key&gt;</code> (a key from <code>POST /api/auth-token/</code>) or, from this site's pages, with the session cookie and the <code>X-CSRFToken</code> header on changes.</p>`,
    sections,
  });
}
