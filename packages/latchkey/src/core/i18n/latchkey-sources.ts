import { join } from 'node:path';
import type { MakeMessagesOptions } from './make-messages.js';

/**
 * Where Latchkey's own messages are, from the package's root: its code and templates, but not
 * what only a developer or an operator reads, which stays English as Django's does: the CLI and
 * the Django import it runs, the mailers' errors (a flow tells the person in its own words), and
 * the test helpers.
 */
export function latchkeyCatalogSources(root: string): Pick<MakeMessagesOptions, 'root' | 'codeDirs' | 'templateDirs' | 'skipDirs' | 'localeDir' | 'domain'> {
  const src = join(root, 'src');
  return {
    root,
    codeDirs: [src],
    templateDirs: [join(src, 'templates')],
    skipDirs: [join(src, 'cli'), join(src, 'django-import'), join(src, 'storage', 'django'), join(src, 'mail'), join(src, 'testing'), join(src, 'templates')],
    localeDir: join(root, 'locale'),
    domain: 'latchkey',
  };
}
