import { Readable } from 'node:stream';
import Papa from 'papaparse';
import { describe, expect, it } from 'vitest';
import { MESSAGES } from '../messages';
import { CSV_FORMAT_MESSAGES } from './encoding';
import {
  CSV_MIME_TYPES,
  csvFileTypeError,
  ERROR_REPORT_COLUMNS,
  ERROR_REPORT_FILE_NAME,
  IMEI_CSV_HEADERS,
  IMEI_CSV_NO_DATA_NOTE,
  ImeiCsvValidator,
  incorrectDataCsv,
  validateImeiCsv,
} from './imeiCsv';

const A = '356938035643809';
const B = '490154203237518';
const C = '353918054478912';

const csv = (...lines: string[]) => lines.join('\n');
const headerError = { line: 1, error: 'Invalid Headers', data: 'headers not matched' };

describe('csvFileTypeError', () => {
  it.each([
    ['text/csv', 'imeis.csv'],
    ['application/vnd.ms-excel', 'imeis.csv'],
    ['TEXT/CSV', 'imeis.csv'],
    ['text/csv', 'no-extension'],
    ['', 'imeis.csv'],
    ['', 'IMEIS.CSV'],
  ])('accepts type %j named %j', (type, name) => {
    expect(csvFileTypeError({ type, name })).toBeNull();
  });

  it.each([
    ['text/plain', 'imeis.csv'],
    ['application/json', 'imeis.csv'],
    ['application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', 'imeis.xlsx'],
    ['', 'imeis.txt'],
    ['', 'imeis.csv.txt'],
    ['', ''],
  ])('refuses type %j named %j with the spec message', (type, name) => {
    expect(csvFileTypeError({ type, name })).toBe('Only CSV files are allowed.');
    expect(csvFileTypeError({ type, name })).toBe(MESSAGES.onlyCsv);
  });

  it('lists the MIME types browsers report for a .csv file', () => {
    expect(CSV_MIME_TYPES).toEqual(['text/csv', 'application/vnd.ms-excel']);
  });
});

describe('validateImeiCsv: a valid file', () => {
  it('returns the IMEIs in file order with the row count and no invalid rows', async () => {
    const result = await validateImeiCsv(csv('Sno,IMEI1', `1,${A}`, `2,${B}`, `3,${C}`));
    expect(result).toEqual({ valid: [A, B, C], invalid: [], invalidCount: 0, total: 3 });
  });

  it('keeps duplicate IMEIs (the file is reported as it is)', async () => {
    const result = await validateImeiCsv(csv('Sno,IMEI1', `1,${A}`, `2,${A}`));
    expect(result.valid).toEqual([A, A]);
  });

  it('matches the header case-insensitively and trimmed, as the sample file spells it or otherwise', async () => {
    for (const header of ['Sno,IMEI1', 'sno,imei1', 'SNO,Imei1', '  sno , IMEI1  ', '"Sno","IMEI1"']) {
      const result = await validateImeiCsv(csv(header, `1,${A}`));
      expect(result, header).toEqual({ valid: [A], invalid: [], invalidCount: 0, total: 1 });
    }
    expect(IMEI_CSV_HEADERS).toEqual(['Sno', 'IMEI1']);
  });

  it('handles a UTF-8 BOM before the header', async () => {
    const result = await validateImeiCsv(`\uFEFF${csv('Sno,IMEI1', `1,${A}`)}`);
    expect(result).toEqual({ valid: [A], invalid: [], invalidCount: 0, total: 1 });
  });

  it('handles CRLF line ends', async () => {
    const result = await validateImeiCsv(['Sno,IMEI1', `1,${A}`, `2,${B}`, ''].join('\r\n'));
    expect(result).toEqual({ valid: [A, B], invalid: [], invalidCount: 0, total: 2 });
  });

  it('handles quoted fields and trims spaces around the IMEI', async () => {
    const result = await validateImeiCsv(csv('Sno,IMEI1', `"1","${A}"`, `2, ${B} `, `"3","  ${C}"`));
    expect(result).toEqual({ valid: [A, B, C], invalid: [], invalidCount: 0, total: 3 });
  });

  it('ignores trailing blank lines and blank lines between rows', async () => {
    const result = await validateImeiCsv(`${csv('Sno,IMEI1', `1,${A}`, '', `2,${B}`)}\n\n  \n\r\n`);
    expect(result).toEqual({ valid: [A, B], invalid: [], invalidCount: 0, total: 2 });
  });
});

describe('validateImeiCsv: a file without data rows', () => {
  it.each([
    ['the header alone', 'Sno,IMEI1'],
    ['the header and a newline', 'Sno,IMEI1\n'],
    ['the header and blank lines', 'Sno,IMEI1\r\n\r\n\r\n'],
  ])('%s passes with zero IMEIs and a note', async (_, text) => {
    const result = await validateImeiCsv(text);
    expect(result).toEqual({
      valid: [],
      invalid: [],
      invalidCount: 0,
      total: 0,
      note: IMEI_CSV_NO_DATA_NOTE,
    });
    expect(result.note).toBe('The file has no data rows: there is nothing to process.');
  });
});

describe('validateImeiCsv: headers', () => {
  it.each([
    ['other names', 'S.No,IMEI'],
    ['swapped columns', 'IMEI1,Sno'],
    ['one column', 'Sno'],
    ['imei2 for imei1', 'Sno,IMEI2'],
    ['a data row first', `1,${A}`],
    ['a blank first line', '\nSno,IMEI1'],
  ])('%s gives the one Invalid Headers row on line 1', async (_, header) => {
    const result = await validateImeiCsv(csv(header, `1,${A}`, `2,${B}`));
    expect(result.invalid).toEqual([headerError]);
    expect(result.invalid[0]?.error).toBe(MESSAGES.invalidHeaders);
    expect(result.invalid[0]?.data).toBe(MESSAGES.headersNotMatched);
    expect(result.valid).toEqual([]);
    expect(result.note).toBeUndefined();
  });

  it('still counts the data rows of a file refused on its header, and reports none of them', async () => {
    const result = await validateImeiCsv(csv('Serial,IMEI', `1,${A}`, '2,123', '3,1,2', ''));
    expect(result).toEqual({ valid: [], invalid: [headerError], invalidCount: 1, total: 3 });
  });

  it.each([
    ['semicolons', 'Sno;IMEI1', `1;${A}`, CSV_FORMAT_MESSAGES.semicolons],
    ['tabs', 'Sno\tIMEI1', `1\t${A}`, CSV_FORMAT_MESSAGES.tabs],
  ])('a file separated by %s is told so (not Invalid Headers)', async (_, header, row, error) => {
    const result = await validateImeiCsv(csv(header, row));
    expect(result).toEqual({
      valid: [],
      invalid: [{ line: 1, error, data: MESSAGES.headersNotMatched }],
      invalidCount: 1,
      total: 1,
    });
    expect(CSV_FORMAT_MESSAGES.semicolons).toBe(
      'The file uses semicolons (;) to separate values: save it as CSV with commas.',
    );
  });

  it.each([
    ['UTF-16 LE with its BOM', Buffer.from(`\uFEFFSno,IMEI1\r\n1,${A}\r\n`, 'utf16le')],
    ['UTF-16 LE without a BOM', Buffer.from(`Sno,IMEI1\r\n1,${A}\r\n`, 'utf16le')],
    ['UTF-16 BE with its BOM', Buffer.from(`\uFEFFSno,IMEI1\r\n1,${A}\r\n`, 'utf16le').swap16()],
  ])('a %s file is told to be saved as CSV UTF-8', async (_, bytes) => {
    for (const source of [new Blob([bytes]), Readable.from([bytes])]) {
      const result = await validateImeiCsv(source);
      expect(result.invalid).toEqual([
        { line: 1, error: CSV_FORMAT_MESSAGES.utf16, data: MESSAGES.headersNotMatched },
      ]);
    }
    expect(CSV_FORMAT_MESSAGES.utf16).toBe('The file is UTF-16: save it as CSV UTF-8.');
  });

  it('refuses an empty file (no header at all)', async () => {
    for (const text of ['', '\uFEFF', '\n\n']) {
      const result = await validateImeiCsv(text);
      expect(result.invalid, JSON.stringify(text)).toEqual([headerError]);
      expect(result.valid).toEqual([]);
    }
  });

  it('accepts extra header columns after sno and imei1 (the rows are still held to two columns)', async () => {
    const result = await validateImeiCsv(csv('Sno,IMEI1,Remarks', `1,${A}`, `2,${B},x`));
    expect(result.valid).toEqual([A]);
    expect(result.invalid).toEqual([
      { line: 3, error: 'More than two columns found. please check your file', data: `2,${B},x` },
    ]);
  });
});

describe('validateImeiCsv: rows', () => {
  it('skips rows of commas only as blank lines, and counts the rows that repeat an IMEI', async () => {
    const result = await validateImeiCsv(
      csv('Sno,IMEI1', `1,${A}`, ',', ' , ', `2,${B}`, `3,${A}`, `4,${A}`, ''),
    );
    expect(result).toEqual({ valid: [A, B, A, A], invalid: [], invalidCount: 0, total: 4, duplicates: 2 });
  });

  it.each([
    ['three columns', `1,${A},extra`],
    ['a trailing comma', `1,${A},`],
    ['one column', A],
    ['many columns', `1,${A},a,b,c`],
  ])('%s gives the column message with the row as data', async (_, row) => {
    const result = await validateImeiCsv(csv('Sno,IMEI1', row));
    expect(result.invalid).toEqual([
      { line: 2, error: 'More than two columns found. please check your file', data: row },
    ]);
    expect(result.invalid[0]?.error).toBe(MESSAGES.moreThanTwoColumns);
    expect(result.valid).toEqual([]);
    expect(result.total).toBe(1);
  });

  it.each([
    ['14 digits', '35693803564380'],
    ['16 digits', '3569380356438091'],
    ['a letter', '35693803564380A'],
    ['an empty IMEI', ''],
    ['a sign', '+35693803564380'],
    ['a decimal', '356938035643809.0'],
    ['Excel scientific notation', '3.56938E+14'],
    ['inner spaces', '356938 035643809'],
  ])('%s gives the length message', async (_, imei) => {
    const result = await validateImeiCsv(csv('Sno,IMEI1', `7,${imei}`));
    expect(result.invalid).toEqual([
      { line: 2, error: 'Invalid Length found in imei, only 15 digits allowed', data: `7,${imei}` },
    ]);
    expect(result.invalid[0]?.error).toBe(MESSAGES.invalidImeiLength);
    expect(result.valid).toEqual([]);
  });

  it('reports every bad row with its line (blank lines counted), and keeps the good ones', async () => {
    const text = csv('Sno,IMEI1', `1,${A}`, '2,123', '', `3,${B},x`, `4,${B}`, '5,abcdefghijklmno', `6,${C}`);
    const result = await validateImeiCsv(text);
    expect(result).toEqual({
      valid: [A, B, C],
      invalid: [
        { line: 3, error: MESSAGES.invalidImeiLength, data: '2,123' },
        { line: 5, error: MESSAGES.moreThanTwoColumns, data: `3,${B},x` },
        { line: 7, error: MESSAGES.invalidImeiLength, data: '5,abcdefghijklmno' },
      ],
      invalidCount: 3,
      total: 6,
    });
  });

  it('reads a quoted comma as part of the field (two columns, a bad IMEI)', async () => {
    const result = await validateImeiCsv(csv('Sno,IMEI1', '1,"3569,38035643809"'));
    expect(result.invalid).toEqual([
      { line: 2, error: MESSAGES.invalidImeiLength, data: '1,3569,38035643809' },
    ]);
  });

  it('does not read the sno column (any value passes)', async () => {
    const result = await validateImeiCsv(csv('Sno,IMEI1', `,${A}`, `abc,${B}`));
    expect(result).toEqual({ valid: [A, B], invalid: [], invalidCount: 0, total: 2 });
  });
});

describe('validateImeiCsv: sources and chunks', () => {
  const big = ['Sno,IMEI1'];
  for (let i = 0; i < 5000; i++) {
    big.push(i % 1000 === 999 ? `${i + 1},bad` : `${i + 1},${String(100000000000000 + i * 7919)}`);
  }
  const bigText = `${big.join('\r\n')}\r\n`;

  it('gives the same answer whatever the chunk size (rows split across chunks)', async () => {
    const whole = await validateImeiCsv(bigText, { chunkSize: bigText.length + 1 });
    expect(whole.total).toBe(5000);
    expect(whole.valid).toHaveLength(4995);
    expect(whole.invalid.map((row) => row.line)).toEqual([1001, 2001, 3001, 4001, 5001]);
    for (const chunkSize of [256, 4096, 65536]) {
      expect(await validateImeiCsv(bigText, { chunkSize })).toEqual(whole);
    }
    // Papa Parse recurses once per string chunk: tiny chunks only on a small text.
    const small = csv('Sno,IMEI1', `"1","${A}"`, '2,123', `3,${B}`, '');
    const expected = await validateImeiCsv(small);
    expect(expected.valid).toEqual([A, B]);
    for (const chunkSize of [1, 2, 7, 16])
      expect(await validateImeiCsv(small, { chunkSize })).toEqual(expected);
  });

  it('reads a Blob (a browser File) and a Node readable stream the same as the text', async () => {
    const expected = await validateImeiCsv(bigText);
    expect(await validateImeiCsv(new Blob([`\uFEFF${bigText}`], { type: 'text/csv' }))).toEqual(expected);
    const bytes = Buffer.from(`\uFEFF${bigText}`);
    const chunks = [];
    for (let offset = 0; offset < bytes.length; offset += 1000)
      chunks.push(bytes.subarray(offset, offset + 1000));
    expect(await validateImeiCsv(Readable.from(chunks))).toEqual(expected);
  });

  it('the synchronous core accepts rows in any batches', () => {
    const validator = new ImeiCsvValidator();
    validator.push([
      ['Sno', 'IMEI1'],
      ['1', A],
    ]);
    validator.push([]);
    validator.push([[''], ['2', 'x'], ['3', B]]);
    expect(validator.result()).toEqual({
      valid: [A, B],
      invalid: [{ line: 4, error: MESSAGES.invalidImeiLength, data: '2,x' }],
      invalidCount: 1,
      total: 3,
    });
  });
});

describe('incorrectDataCsv', () => {
  it('has the spec file name and columns', () => {
    expect(ERROR_REPORT_FILE_NAME).toBe('incorrect_data.csv');
    expect(ERROR_REPORT_COLUMNS).toEqual(['Sno', 'Incorrect Data', 'Error Message']);
  });

  it('writes one row per invalid row: its line, its data and the error', async () => {
    const text = await incorrectDataCsv([
      { line: 3, error: MESSAGES.invalidImeiLength, data: '2,123' },
      { line: 5, error: MESSAGES.moreThanTwoColumns, data: `3,${B},x` },
    ]);
    expect(text.split('\r\n')).toEqual([
      'Sno,Incorrect Data,Error Message',
      `3,"2,123","${MESSAGES.invalidImeiLength}"`,
      `5,"3,${B},x",${MESSAGES.moreThanTwoColumns}`,
    ]);
    expect(Papa.parse(text, { skipEmptyLines: true }).data).toEqual([
      ['Sno', 'Incorrect Data', 'Error Message'],
      ['3', '2,123', MESSAGES.invalidImeiLength],
      ['5', `3,${B},x`, MESSAGES.moreThanTwoColumns],
    ]);
  });

  it('writes the header alone for no invalid rows, and the header error as it is', async () => {
    expect(await incorrectDataCsv([])).toBe('Sno,Incorrect Data,Error Message\r\n');
    expect(await incorrectDataCsv([headerError])).toBe(
      'Sno,Incorrect Data,Error Message\r\n1,headers not matched,Invalid Headers',
    );
  });

  it('quotes quotes, commas and line breaks so the file reads back to the same cells', async () => {
    const data = ['say "hi",there', 'two\nlines', ' padded '];
    const text = await incorrectDataCsv(data.map((d, i) => ({ line: i + 2, error: 'e', data: d })));
    const cells = Papa.parse<string[]>(text, { skipEmptyLines: true }).data.slice(1);
    expect(cells.map((row) => row[1])).toEqual(data);
  });

  it.each(['=HYPERLINK("http://x")', '+1+2', '-1+2', '@SUM(A1)', '\t=1', '\r=1', '=1\n=2'])(
    'neutralises the formula cell %j with a leading single quote',
    async (data) => {
      const text = await incorrectDataCsv([{ line: 2, error: '=error', data }]);
      const [, row] = Papa.parse<string[]>(text, { skipEmptyLines: true }).data;
      expect(row).toEqual(['2', `'${data}`, "'=error"]);
    },
  );

  it('leaves ordinary cells alone (a quote only at the start of a formula)', async () => {
    const text = await incorrectDataCsv([{ line: 9, error: 'a=b', data: '1,35-69' }]);
    expect(text.split('\r\n')[1]).toBe('9,"1,35-69",a=b');
  });
});
