/**
 * A content-disposition value for a download named `name`: the name itself when it is plain printable
 * ASCII, else an ASCII stand-in (`_` for each other character) and the UTF-8 name (RFC 6266), so a name
 * made of data (a device's brand) never makes an invalid header.
 */
export function attachment(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  if (ascii === name) return `attachment; filename="${name}"`;
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}
