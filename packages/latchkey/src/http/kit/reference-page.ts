/**
 * What the two API reference pages share (the headless API's /_allauth/openapi.html and the API
 * layer's /api/docs/): escaping, the policy they are served with, and the page around their
 * sections. They run no script and load nothing but Latchkey's own stylesheet, so the policy can
 * forbid everything else: whatever a description says, it cannot run or send anything.
 */
export const REFERENCE_PAGE_POLICY = "default-src 'none'; style-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

/** Inline `code` spans of a description as <code>; everything else escaped. */
export function prose(text: string): string {
  return escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>');
}

export interface ReferencePage {
  title: string;
  /** Latchkey's stylesheet, where this site serves it (under URL_PREFIX). */
  stylesheet: string;
  /** Links in the header, to the machine-readable forms of the same document. */
  links: { href: string; text: string }[];
  /** Already-escaped HTML: the introduction, then the sections. */
  introduction: string;
  sections: string[];
}

export function referencePageHtml(page: ReferencePage): string {
  const title = escapeHtml(page.title);
  const links = page.links.map((link) => `<a href="${escapeHtml(link.href)}">${escapeHtml(link.text)}</a>`).join('');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<link rel="stylesheet" href="${escapeHtml(page.stylesheet)}">
</head>
<body>
<header class="lk-header"><span class="lk-brand">${title}</span><nav class="lk-nav">${links}</nav></header>
<main class="lk-main">
<h1>${title}</h1>
${page.introduction}
${page.sections.join('\n')}
</main>
</body>
</html>
`;
}
