import { describe, expect, it } from 'vitest';
import { OptionError, optionsFrom, slugFrom, withDefaults } from './options.js';

const answersWith = withDefaults;

describe('the generation options', () => {
  it('derives the slug from the project name, as an npm package name', () => {
    expect(slugFrom('My Awesome Project')).toBe('my-awesome-project');
    expect(slugFrom('  Café   Crème! 2 ')).toBe('cafe-creme-2');
    expect(answersWith({ project_name: 'Ada Shop' }).project_slug).toBe('ada-shop');
  });

  it('takes the defaults: username login, no API layer', () => {
    expect(optionsFrom(answersWith({}))).toEqual({
      projectName: 'My Awesome Project',
      projectSlug: 'my-awesome-project',
      description: 'My Awesome Project: accounts and authentication by Latchkey.',
      authorName: 'Your Name',
      domainName: 'example.com',
      email: 'you@example.com',
      usernameType: 'username',
      useDrf: false,
    });
  });

  it('selects the API layer with y only; any other use_drf selects none, as the specification says', () => {
    expect(optionsFrom(answersWith({ use_drf: 'y' })).useDrf).toBe(true);
    expect(optionsFrom(answersWith({ use_drf: 'Y' })).useDrf).toBe(true);
    for (const other of ['n', 'yes', 'no', '1']) expect(optionsFrom(answersWith({ use_drf: other })).useDrf).toBe(false);
  });

  it.each([
    [{ username_type: 'phone' }, 'username_type "phone" is not allowed: use username or email.'],
    [{ project_slug: 'My Project' }, 'project_slug "My Project" is not allowed: use lower-case letters, digits and single hyphens'],
    [{ project_slug: '1project' }, 'project_slug "1project" is not allowed'],
    [{ project_name: '!!!' }, 'project_slug "" is not allowed'],
    [{ project_name: "Ada's Shop", project_slug: 'ada-shop' }, 'project_name must not contain quotes'],
    [{ domain_name: 'localhost' }, 'domain_name "localhost" is not allowed: use a domain name such as example.com.'],
    [{ email: 'nobody' }, 'email "nobody" is not allowed'],
    [{ author_name: '   ' }, 'author_name must not be empty.'],
  ])('refuses %j with one line naming what is allowed', (overrides, message) => {
    expect(() => optionsFrom(answersWith(overrides))).toThrow(OptionError);
    expect(() => optionsFrom(answersWith(overrides))).toThrow(message);
  });
});
