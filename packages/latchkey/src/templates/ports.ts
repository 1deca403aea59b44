/** Renders pages and emails by template name; a project overrides a template by path (templates/renderer.ts). */
export interface TemplateRenderer {
  render(name: string, context: Record<string, unknown>): string;
}
