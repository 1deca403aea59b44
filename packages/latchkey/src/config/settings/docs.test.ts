import { describe, expect, it } from 'vitest';
import { integerField, stringListField } from '../fields.js';
import { setting, VALUE } from './declaration.js';
import { defaultCell, endMarker, formatDefault, startMarker, withSettingsTables } from './docs.js';
import { SETTING_GROUPS } from './index.js';

const docs = { allowed: 'a number', does: 'Something.' };

describe('the Default column', () => {
  it('shows values as the tables always have', () => {
    expect(formatDefault(8000)).toBe('`8000`');
    expect(formatDefault(false)).toBe('`false`');
    expect(formatDefault(null)).toBe('`null`');
    expect(formatDefault(['totp', 'recovery_codes'])).toBe('`totp, recovery_codes`');
    expect(formatDefault([])).toBe('empty');
    expect(formatDefault({})).toBe('`{}`');
  });

  it('shows one value for all environments, or one line per value naming its environments', () => {
    expect(defaultCell('X', setting({ field: integerField(0), default: { base: 3 }, docs }))).toBe('`3`');
    expect(defaultCell('X', setting({ field: integerField(0), default: { base: 2, test: 1 }, docs: { ...docs, default: { base: `${VALUE} (two)` } } }))).toBe(
      'local, production: `2` (two)<br>test: `1`',
    );
    expect(defaultCell('X', setting({ field: integerField(0), default: { local: 1, test: 1 }, docs }))).toBe('local, test: `1`<br>production: **required**');
  });

  it('needs words for a default computed from the project, and no value where there is none', () => {
    const computed = setting({ field: stringListField('hosts'), default: { production: (project) => [project.DOMAIN_NAME] }, docs });
    expect(() => defaultCell('X', computed)).toThrow("X's default in production is computed from the project");
    expect(defaultCell('X', setting({ ...computed, docs: { ...docs, default: { production: '`DOMAIN_NAME`' } } }))).toBe('local, test: **required**<br>production: `DOMAIN_NAME`');
    expect(() => defaultCell('X', setting({ field: integerField(0), default: {}, docs: { ...docs, default: `${VALUE} (days)` } }))).toThrow('X has no default in local');
  });
});

describe('the page', () => {
  const allMarkers = SETTING_GROUPS.map((group) => `${startMarker(group.id)}\nold table\n${endMarker(group.id)}`).join('\n\nProse between the tables.\n\n');

  it('gets each table written between its markers, and nothing else changed', () => {
    const page = `# Settings\n\nProse before.\n\n${allMarkers}\n\nProse after.\n`;
    const written = withSettingsTables(page);
    expect(written).not.toContain('old table');
    expect(written.startsWith('# Settings\n\nProse before.\n\n')).toBe(true);
    expect(written.endsWith('\n\nProse after.\n')).toBe(true);
    expect(written.split('Prose between the tables.').length).toBe(SETTING_GROUPS.length);
    expect(written).toContain(`${startMarker('site')}\n\n| Setting | Variable | Allowed | Default | What it does |\n`);
    expect(withSettingsTables(written)).toBe(written);
  });

  it('stops on a missing table or a marker naming no group', () => {
    expect(() => withSettingsTables(allMarkers.replace(endMarker('mfa'), ''))).toThrow('docs/settings.md has no markers for the mfa table');
    expect(() => withSettingsTables(`${allMarkers}\n${startMarker('billing')}\n${endMarker('billing')}`)).toThrow('marker for billing, which is no group');
  });
});
