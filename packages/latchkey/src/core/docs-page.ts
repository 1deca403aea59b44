/**
 * Where a project finds a page of Latchkey's documentation: the package carries docs/ (copied from
 * the repository's at pack time), so the path names the pages of the very version installed, and
 * resolves in any project after `npm install`.
 */
export function docsPage(page: `${string}.md`): string {
  return `node_modules/@latchkey/core/docs/${page}`;
}
