import { describe, expect, it } from 'vitest';
import { isPublicAddress, privateUrlProblem, publicOnlyLookup } from './public-address.js';

describe('isPublicAddress', () => {
  it('is false for loopback, private, link-local, CGNAT, multicast, reserved and documentation ranges', () => {
    for (const ip of ['127.0.0.1', '127.255.0.9', '10.0.0.1', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1',
      '0.0.0.0', '224.0.0.1', '255.255.255.255', '192.0.2.10', '198.18.0.1', '::1', '::', 'fe80::1', 'fc00::1', 'fd12:3456::1', 'ff02::1',
      '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:a9fe:a9fe', '64:ff9b::a9fe:a9fe', '2001:db8::1',
      '::7f00:1', '::127.0.0.1', '::8.8.8.8', '::ffff:0:127.0.0.1', '::ffff:0:7f00:1', '0:0:0:0:0:ffff:7f00:1', '::FFFF:A9FE:A9FE']) {
      expect(isPublicAddress(ip), ip).toBe(false);
    }
  });

  it('is true for public unicast addresses, and false for what is not an address', () => {
    for (const ip of ['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) expect(isPublicAddress(ip), ip).toBe(true);
    for (const s of ['example.com', '', '999.1.1.1']) expect(isPublicAddress(s), s).toBe(false);
  });
});

describe('privateUrlProblem', () => {
  it('names the problem of local hosts and non-public literals; null for public names and addresses', () => {
    expect(privateUrlProblem('http://127.0.0.1:8080/x')).toMatch(/non-public address \(127\.0\.0\.1\)/);
    expect(privateUrlProblem('https://[::1]/x')).toMatch(/non-public/);
    expect(privateUrlProblem('https://localhost/x')).toMatch(/local host/);
    expect(privateUrlProblem('https://metadata.google.internal/x')).toMatch(/local host/);
    expect(privateUrlProblem('https://intranet/x')).toMatch(/local host/);
    expect(privateUrlProblem('not a url')).toMatch(/not a valid URL/);
    expect(privateUrlProblem('https://hooks.slack.com/services/T/B/X')).toBeNull();
    expect(privateUrlProblem('https://8.8.8.8/x')).toBeNull();
  });
});

describe('publicOnlyLookup', () => {
  const fake = (addresses: string[]) => ((_h: string, _o: unknown, cb: (e: null, a: { address: string; family: number }[]) => void) =>
    cb(null, addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })))) as never;
  const run = (addresses: string[], all: boolean) => new Promise<{ err: NodeJS.ErrnoException | null; address: unknown }>((resolve) =>
    publicOnlyLookup(fake(addresses))('hooks.example.com', { all } as never, (err, address) => resolve({ err, address })));

  it('answers public addresses in the form asked for', async () => {
    expect(await run(['8.8.8.8'], false)).toEqual({ err: null, address: '8.8.8.8' });
    expect((await run(['8.8.8.8', '2606:4700:4700::1111'], true)).address).toHaveLength(2);
  });

  it('fails when any answer is not public (one bad address among good ones too)', async () => {
    for (const list of [['127.0.0.1'], ['8.8.8.8', '10.0.0.5'], []]) {
      const { err } = await run(list, false);
      expect(err?.code, list.join()).toBe('EADDRNOTPUBLIC');
    }
  });
});
