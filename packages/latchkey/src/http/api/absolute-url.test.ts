import { describe, expect, it } from 'vitest';
import { absoluteUrl } from './index.js';

describe('absoluteUrl', () => {
  it('joins SITE_URL and the path with exactly one slash, keeping a path prefix of SITE_URL', () => {
    expect(absoluteUrl('https://example.com', '/api/users/ada/')).toBe('https://example.com/api/users/ada/');
    expect(absoluteUrl('https://example.com/', '/api/users/ada/')).toBe('https://example.com/api/users/ada/');
    expect(absoluteUrl('https://example.com', 'api/users/ada/')).toBe('https://example.com/api/users/ada/');
    expect(absoluteUrl('https://example.com/app/', '/api/users/1/')).toBe('https://example.com/app/api/users/1/');
  });
});
