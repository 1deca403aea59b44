import { fileURLToPath } from 'node:url';
import nunjucks from 'nunjucks';

/** The library's own templates: this folder. */
export const LIBRARY_TEMPLATES = fileURLToPath(new URL('.', import.meta.url));

export interface TemplateRenderer {
  render(name: string, context: Record<string, unknown>): string;
}

/**
 * Renders pages and emails with Nunjucks (Django-like syntax: extends, blocks, includes). A
 * project overrides any template by placing a file at the same relative path in one of its own
 * template folders, which are searched first, as Django's template loaders do. Autoescaping is on:
 * every value is HTML-escaped unless a template says otherwise.
 */
export function createTemplateRenderer(options: { projectDirs?: readonly string[]; cache: boolean }): TemplateRenderer {
  const loader = new nunjucks.FileSystemLoader([...(options.projectDirs ?? []), LIBRARY_TEMPLATES], { noCache: !options.cache });
  const environment = new nunjucks.Environment(loader, { autoescape: true, throwOnUndefined: false, trimBlocks: true, lstripBlocks: true });
  return {
    render(name, context) {
      return environment.render(name, context);
    },
  };
}
