/**
 * An IdP's metadata as the service provider reads it: from the test IdP's real metadata document
 * on loopback (fetched, cached for metadata_cache_timeout on Latchkey's clock, fetched again after),
 * and refused with a reason when it is not the configured IdP's or lacks what a sign-in needs.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../../core/clock.js';
import { createTestKeyPair, certificateBody } from '../../../testing/saml-keys.js';
import { idpMetadataXml } from '../../../testing/saml-messages.js';
import { startTestSamlIdp, type TestSamlIdp } from '../../../testing/saml-idp.js';
import { ProviderError } from '../provider.js';
import { idpEndpointsSource, readIdpMetadata } from './idp-metadata.js';
import type { SamlIdpOptions } from './settings.js';

let idp: TestSamlIdp;
beforeAll(async () => {
  idp = await startTestSamlIdp();
});
afterAll(() => idp.close());

const failure = (run: () => unknown): string => {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ProviderError);
    return (error as ProviderError).message;
  }
  throw new Error('expected a ProviderError');
};

describe('readIdpMetadata', () => {
  it('gives the HTTP-Redirect single sign-on and logout URLs and the signing certificate', () => {
    const endpoints = readIdpMetadata('acme', idp.entityId, idp.metadataXml());
    expect(endpoints.ssoUrl.toString()).toBe(idp.ssoUrl);
    expect(endpoints.sloUrl?.toString()).toBe(idp.sloUrl);
    expect(endpoints.certificates).toEqual([certificateBody(idp.keys.certificate)]);
  });

  it('refuses a document of another entity, one that is not XML or holds a DOCTYPE, and endpoints over plain http elsewhere', () => {
    expect(failure(() => readIdpMetadata('acme', 'https://other.example/idp', idp.metadataXml()))).toContain('describes no single entity "https://other.example/idp"');
    expect(failure(() => readIdpMetadata('acme', idp.entityId, '<EntityDescriptor'))).toContain('not well-formed XML');
    const withDoctype = `<!DOCTYPE x [<!ENTITY e "boom">]>${idp.metadataXml().replace(/^<\?xml[^>]*>/, '')}`;
    expect(failure(() => readIdpMetadata('acme', idp.entityId, withDoctype))).toContain('not well-formed XML');
    const remote = idpMetadataXml({ entityId: idp.entityId, ssoUrl: 'http://idp.example/sso', sloUrl: 'https://idp.example/slo', certificate: idp.keys.certificate });
    expect(failure(() => readIdpMetadata('acme', idp.entityId, remote))).toContain('SingleSignOnService "http://idp.example/sso", which is not an https URL');
  });
});

describe('idpEndpointsSource with a metadata_url', () => {
  const options = (overrides: Partial<SamlIdpOptions> = {}): SamlIdpOptions => ({
    entityId: idp.entityId,
    metadataUrl: new URL(idp.metadataUrl),
    metadataRequestTimeoutSeconds: 5,
    metadataCacheTimeoutSeconds: 3600,
    certificates: [],
    ...overrides,
  });
  /** The real fetch, counted. */
  function countingFetch(): { fetch: typeof fetch; count: () => number } {
    let count = 0;
    return {
      fetch: (input, init) => {
        count += 1;
        return fetch(input, init);
      },
      count: () => count,
    };
  }

  it('fetches the metadata once per metadata_cache_timeout, and parallel sign-ins share one fetch', async () => {
    const clock = new ManualClock();
    const counted = countingFetch();
    const source = idpEndpointsSource('acme', options(), { fetch: counted.fetch, timeoutSeconds: 5 }, clock);
    const [first, second] = await Promise.all([source(), source()]);
    expect(first.ssoUrl.toString()).toBe(idp.ssoUrl);
    expect(second).toBe(first);
    clock.advance(3599 * 1000);
    await source();
    expect(counted.count()).toBe(1);
    clock.advance(1000);
    await source();
    expect(counted.count()).toBe(2);
  });

  it('keeps certificates pinned in the settings beside the published ones (a key the IdP will rotate to)', async () => {
    const next = createTestKeyPair('next idp key');
    const source = idpEndpointsSource('acme', options({ certificates: [next.certificate] }), { timeoutSeconds: 5 }, new ManualClock());
    expect((await source()).certificates).toEqual([certificateBody(idp.keys.certificate), next.certificate]);
  });

  it('gives up on an IdP that never answers after metadata_request_timeout, and tries again at the next sign-in', async () => {
    // Takes each request and never answers it, as an IdP behind a stuck proxy.
    let requests = 0;
    const silent = createServer(() => {
      requests += 1;
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const metadataUrl = new URL(`http://127.0.0.1:${(silent.address() as AddressInfo).port}/metadata`);
      // The client's own timeout is long: the metadata's one second is the one that must apply.
      const source = idpEndpointsSource('acme', options({ metadataUrl, metadataRequestTimeoutSeconds: 1 }), { timeoutSeconds: 60 }, new ManualClock());
      const started = performance.now();
      await expect(source()).rejects.toThrow(ProviderError);
      const waited = performance.now() - started;
      // AbortSignal.timeout runs on the wall clock: about a second, with a generous margin for a busy machine.
      expect(waited).toBeGreaterThanOrEqual(900);
      expect(waited).toBeLessThan(10_000);
      expect(requests).toBe(1);
      // Latchkey's clock has not moved, so only a cached failure could spare the IdP this request.
      await expect(source()).rejects.toThrow(/IdP metadata request to .* failed/);
      expect(requests).toBe(2);
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('does not cache a failed fetch: the next sign-in tries again', async () => {
    const counted = countingFetch();
    const missing = options({ metadataUrl: new URL('/no-such-metadata', idp.origin) });
    const source = idpEndpointsSource('acme', missing, { fetch: counted.fetch, timeoutSeconds: 5 }, new ManualClock());
    await expect(source()).rejects.toThrow(/IdP metadata request to .* answered HTTP 404/);
    await expect(source()).rejects.toThrow(ProviderError);
    expect(counted.count()).toBe(2);
  });
});
