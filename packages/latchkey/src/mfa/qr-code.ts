import QRCode from 'qrcode';

/**
 * The QR code of an otpauth:// URI as an SVG document, drawn on the server so that the page needs
 * no script and the secret never leaves for a third-party QR service. qrcode draws with path
 * attributes only (no style attributes), which the pages' Content-Security-Policy allows.
 */
export function qrCodeSvg(text: string): Promise<string> {
  return QRCode.toString(text, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
}
