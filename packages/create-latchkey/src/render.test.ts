import { describe, expect, it } from 'vitest';
import { renderTemplate, TemplateError } from './render.js';

const flags = { use_drf: true, email: false };
const render = (source: string, values: Record<string, string> = {}) => renderTemplate(source, values, flags, 't');

describe('the template language', () => {
  it('replaces values and leaves every other character as it was', () => {
    expect(render('name: %%project_name%%, {{ user.email }} {% if x %}\n', { project_name: 'My 100% Project' })).toBe(
      'name: My 100% Project, {{ user.email }} {% if x %}\n',
    );
  });

  it('keeps or drops the lines of a block, and the directive lines vanish with their indentation', () => {
    const source = ['a', '  %% if use_drf %%', '  api', '  %% else %%', '  no api', '  %% endif %%', '%% if not email %%', 'username', '%% endif %%', 'z'].join('\n');
    expect(render(source)).toBe('a\n  api\nusername\nz');
  });

  it('nests blocks: an else inside a dropped block stays dropped', () => {
    const source = ['%% if email %%', '%% if use_drf %%', 'x', '%% else %%', 'y', '%% endif %%', '%% endif %%', 'z'].join('\n');
    expect(render(source)).toBe('z');
  });

  it.each([
    ['an unknown value', '%%nope%%', 't:1: unknown value "nope"'],
    ['an unknown flag', '%% if nope %%\n%% endif %%', 't:1: unknown flag "nope"'],
    ['an unknown directive', '%% elif use_drf %%', 't:1: unknown directive "elif use_drf"'],
    ['an if without endif', 'a\n%% if use_drf %%\nb', 't:2: "if" without "endif"'],
    ['an endif without if', '%% endif %%', 't:1: "endif" without "if"'],
    ['a second else', '%% if use_drf %%\n%% else %%\n%% else %%\n%% endif %%', 't:3: "else" without "if"'],
    ['a stray marker', 'width: 100%%;', 't:1: a "%%" that is not a marker'],
  ])('refuses %s, naming the line', (_case, source, message) => {
    expect(() => render(source)).toThrow(TemplateError);
    expect(() => render(source)).toThrow(message);
  });
});
