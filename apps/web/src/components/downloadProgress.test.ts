import { describe, expect, it } from 'vitest';
import { downloadProgressText, formatBytes } from './downloadProgress';

describe('download progress', () => {
  it('shows the bytes received and the rows of the file', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(1536)).toBe('1.5 KB');
    expect(formatBytes(5 * 1024 * 1024)).toBe('5.0 MB');
    expect(
      downloadProgressText({ fileName: 'deenroll_record-a-b.xlsx', bytes: 2048, totalRows: 1_000_000 }),
    ).toBe('Exporting deenroll_record-a-b.xlsx: 2.0 KB received, 1,000,000 rows');
    expect(downloadProgressText({ fileName: 'f.xlsx', bytes: 0, totalRows: null })).toBe(
      'Exporting f.xlsx: 0 B received',
    );
  });
});
