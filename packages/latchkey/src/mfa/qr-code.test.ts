import QRCode from 'qrcode';
import { describe, expect, it } from 'vitest';
import { qrCodeSvg } from './qr-code.js';

const URI = 'otpauth://totp/Test%20Site:ada?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=Test%20Site&algorithm=SHA1&digits=6&period=30';

describe('QR code of an otpauth URI', () => {
  it('is an SVG document drawn with paths only: no style attribute, no script, no external reference', async () => {
    const svg = await qrCodeSvg(URI);
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true);
    expect(svg).toContain('xmlns="http://www.w3.org/2000/svg"');
    expect(svg).toContain('<path');
    expect(svg).not.toContain('style=');
    expect(svg).not.toMatch(/<script|href=|<image|<foreignObject/i);
    // The secret is drawn, never written out.
    expect(svg).not.toContain('JBSWY3DP');
  });

  it('holds the whole URI: its grid is that of the URI at error correction M, with a 2-module margin', async () => {
    const svg = await qrCodeSvg(URI);
    const { modules } = QRCode.create(URI, { errorCorrectionLevel: 'M' });
    const side = modules.size + 4;
    expect(svg).toContain(`viewBox="0 0 ${side} ${side}"`);
    // A 121-character URI needs more than the smallest (21 x 21) QR code.
    expect(modules.size).toBeGreaterThan(21);
  });

  it('draws different URIs differently, and one URI the same way every time', async () => {
    const other = URI.replace('ada', 'bob');
    expect(await qrCodeSvg(URI)).toBe(await qrCodeSvg(URI));
    expect(await qrCodeSvg(other)).not.toBe(await qrCodeSvg(URI));
  });
});
