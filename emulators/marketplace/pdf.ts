/** PDF text strings escape backslashes and parentheses; anything outside printable ASCII becomes `?`. */
function pdfText(text: string): string {
  return text.replace(/[^\x20-\x7e]/g, '?').replace(/([\\()])/g, '\\$1');
}

/**
 * A real one-page PDF 1.4 (catalog, pages, page, font, content stream, exact xref offsets), so a
 * test or a browser can open what the label download streams. No dependency: the format is small.
 */
export function makePdf(lines: readonly string[]): Buffer {
  const content = ['BT', '/F1 12 Tf', '14 TL', '50 780 Td', ...lines.map((line) => `(${pdfText(line)}) '`), 'ET'].join('\n');
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>',
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
    `<< /Length ${Buffer.byteLength(content, 'latin1')} >>\nstream\n${content}\nendstream`,
  ];
  let body = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((object, index) => {
    offsets.push(Buffer.byteLength(body, 'latin1'));
    body += `${index + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xrefAt = Buffer.byteLength(body, 'latin1');
  // Each xref entry is exactly 20 bytes: 10-digit offset, space, 5-digit generation, space, type, CR LF.
  const entries = ['0000000000 65535 f\r\n', ...offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n\r\n`)];
  body += `xref\n0 ${objects.length + 1}\n${entries.join('')}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xrefAt}\n%%EOF\n`;
  return Buffer.from(body, 'latin1');
}
