/** Builds a multipart/form-data body for `app.inject` (fields and one file). */
export function multipart(
  fields: Record<string, string>,
  file: { name: string; type: string; content: string | Buffer } | null,
  fieldName = 'file',
): { payload: Buffer; headers: Record<string, string> } {
  const boundary = `----lendlock${Math.random().toString(16).slice(2)}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    parts.push(
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`),
    );
  }
  if (file) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${fieldName}"; filename="${file.name}"\r\nContent-Type: ${file.type}\r\n\r\n`,
      ),
      Buffer.isBuffer(file.content) ? file.content : Buffer.from(file.content),
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return {
    payload: Buffer.concat(parts),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
  };
}

/** An IMEI batch CSV of the spec's format. */
export function imeiCsv(imeis: string[]): string {
  return `Sno,IMEI1\r\n${imeis.map((imei, i) => `${i + 1},${imei}`).join('\r\n')}\r\n`;
}
