/**
 * Where a provider may be (private-hosts.ts): in production no loopback or private address, however
 * it is written (IPv4-mapped IPv6, NAT64, 6to4, a name that is always loopback), unless the host
 * is listed in SOCIALACCOUNT_PRIVATE_HOST_ALLOWLIST; anywhere outside production.
 */
import { describe, expect, it } from 'vitest';
import { ANY_HOST, isPrivateAddress, privateAddressProblem, privateUrlProblem, providerHostRule } from './private-hosts.js';

const production = providerHostRule({ ENVIRONMENT: 'production', SOCIALACCOUNT_PRIVATE_HOST_ALLOWLIST: ['keycloak.internal', '10.0.0.5', '[fd00::5]'] });

describe('private addresses', () => {
  it.each([
    '127.0.0.1', '127.255.0.9', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '100.127.255.255',
    '0.0.0.0', '255.255.255.255', '224.0.0.1', '::1', '[::1]', '::', 'fc00::1', 'fd00:ec2::254', 'fe80::1', 'fe80::1%eth0', '::ffff:127.0.0.1',
    '::ffff:7f00:1', '::ffff:169.254.169.254', '::ffff:10.0.0.1', '64:ff9b::a9fe:a9fe', '2002:7f00:1::',
  ])('%s is private', (address) => {
    expect(isPrivateAddress(address)).toBe(true);
  });

  it.each(['8.8.8.8', '172.32.0.1', '100.128.0.1', '192.169.0.1', '2001:4860:4860::8888', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::', 'example.com'])(
    '%s is not',
    (address) => {
      expect(isPrivateAddress(address)).toBe(false);
    },
  );
});

describe('the rule in production', () => {
  it('refuses a URL on a private address or a loopback name, naming the setting that would allow it', () => {
    expect(privateUrlProblem(new URL('http://127.0.0.1:6379/'), production)).toBe(
      'is on a loopback or private address, which production refuses unless SOCIALACCOUNT_PRIVATE_HOST_ALLOWLIST lists 127.0.0.1',
    );
    for (const url of ['https://[::ffff:127.0.0.1]/', 'https://0x7f.1/', 'https://2130706433/', 'https://LOCALHOST./', 'https://redis.localhost/', 'https://169.254.169.254/latest/meta-data/', 'https://[fd00::6]/']) {
      expect(privateUrlProblem(new URL(url), production), url).toMatch(/loopback or private address/);
    }
  });

  it('leaves a public name to be checked when it is resolved, and spares the hosts listed', () => {
    for (const url of ['https://id.corp.example/', 'https://keycloak.internal/', 'https://KEYCLOAK.internal./', 'https://10.0.0.5/', 'https://[fd00::5]/']) {
      expect(privateUrlProblem(new URL(url), production), url).toBeUndefined();
    }
  });

  it('refuses a connection to a private address a name resolves to, unless the name is listed', () => {
    expect(privateAddressProblem('idp.example', '127.0.0.1', production)).toBe(
      'idp.example resolves to 127.0.0.1, a loopback or private address, which production refuses unless SOCIALACCOUNT_PRIVATE_HOST_ALLOWLIST lists idp.example',
    );
    expect(privateAddressProblem('169.254.169.254', '169.254.169.254', production)).toBe(
      '169.254.169.254 is a loopback or private address, which production refuses unless SOCIALACCOUNT_PRIVATE_HOST_ALLOWLIST lists 169.254.169.254',
    );
    expect(privateAddressProblem('keycloak.internal', '10.9.9.9', production)).toBeUndefined();
    expect(privateAddressProblem('idp.example', '93.184.215.14', production)).toBeUndefined();
  });
});

describe('the rule outside production', () => {
  it('allows loopback and private addresses', () => {
    expect(providerHostRule({ ENVIRONMENT: 'test', SOCIALACCOUNT_PRIVATE_HOST_ALLOWLIST: [] })).toBe(ANY_HOST);
    expect(privateUrlProblem(new URL('http://127.0.0.1:6379/'), ANY_HOST)).toBeUndefined();
    expect(privateAddressProblem('localhost', '127.0.0.1', ANY_HOST)).toBeUndefined();
  });
});
