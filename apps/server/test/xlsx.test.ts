/**
 * The export's own xlsx writer (ADR 0006): what it writes is read back by ExcelJS's reader, cell by cell
 * and type by type, including text XML must escape or cannot carry, many rows through a slow reader, and
 * a reader that goes away halfway.
 */
import { PassThrough, Writable } from 'node:stream';
import ExcelJS from 'exceljs';
import { describe, expect, it } from 'vitest';
import yauzl from 'yauzl';
import { excelSerial, sheetName, writeXlsx, type XlsxCell, xlsxWriter, xmlText } from '../src/lib/xlsx';

/** Writes `rows` and returns the file, read by a consumer that takes `delayEvery` chunks slowly. */
async function writeFile(
  name: string,
  rows: readonly (readonly XlsxCell[])[],
  delayEvery = 0,
): Promise<Buffer> {
  const output = new PassThrough();
  const chunks: Buffer[] = [];
  let seen = 0;
  const reader = new Writable({
    highWaterMark: 1024,
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk);
      seen++;
      if (delayEvery > 0 && seen % delayEvery === 0) setTimeout(done, 2);
      else done();
    },
  });
  const read = new Promise<void>((resolve, reject) => {
    reader.on('finish', resolve);
    reader.on('error', reject);
  });
  output.pipe(reader);
  const writer = xlsxWriter(output, name, { zlibLevel: 1 });
  for (const row of rows) {
    const full = writer.addRow(row);
    if (full) await full;
  }
  await writer.finish();
  await read;
  return Buffer.concat(chunks);
}

async function readBack(file: Buffer): Promise<{ name: string; rows: unknown[][] }> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(file as unknown as ArrayBuffer);
  const sheet = workbook.worksheets[0];
  if (!sheet) throw new Error('no sheet');
  const rows: unknown[][] = [];
  sheet.eachRow({ includeEmpty: true }, (row) => {
    rows.push((row.values as unknown[]).slice(1));
  });
  return { name: sheet.name, rows };
}

/**
 * Every entry of a zip as yauzl, a zip reader of its own, reads it: name, the sizes the central directory
 * records, and the inflated text (yauzl checks each entry's CRC-32 and sizes while it reads).
 */
async function unzipped(file: Buffer): Promise<{ name: string; size: number; text: string }[]> {
  const zip = await yauzl.fromBufferPromise(file, { lazyEntries: true, validateEntrySizes: true });
  const entries: { name: string; size: number; text: string }[] = [];
  for await (const entry of zip.eachEntry()) {
    const stream = await zip.openReadStreamPromise(entry);
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    entries.push({
      name: entry.fileName,
      size: entry.uncompressedSize,
      text: Buffer.concat(chunks).toString('utf8'),
    });
  }
  return entries;
}

/** The names of a zip's entries, from its central directory. */
function zipEntries(file: Buffer): string[] {
  const end = file.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  let offset = file.readUInt32LE(end + 16);
  const count = file.readUInt16LE(end + 10);
  const names: string[] = [];
  for (let i = 0; i < count; i++) {
    const nameLength = file.readUInt16LE(offset + 28);
    const extra = file.readUInt16LE(offset + 30);
    const comment = file.readUInt16LE(offset + 32);
    names.push(file.toString('utf8', offset + 46, offset + 46 + nameLength));
    offset += 46 + nameLength + extra + comment;
  }
  return names;
}

describe('the xlsx writer', () => {
  it('writes numbers as numbers, text as text, leaves empty cells empty, and escapes what XML needs', async () => {
    const file = await writeFile('Activate Alarm', [
      ['Id', 'Date and Time', 'Name', 'Note'],
      [1, '2026-03-01T10:00:00.000Z', 'a<b & "c" \'d\' >', null],
      [2.5, null, 'Ünïcødé ✓ 🙂', '  spaced  '],
      [3, 'tab\there\nnew line', 'bell\u0007 and nul\u0000 dropped', "'=1+2"],
    ]);
    expect(zipEntries(file).sort()).toEqual([
      '[Content_Types].xml',
      '_rels/.rels',
      'docProps/app.xml',
      'docProps/core.xml',
      'xl/_rels/workbook.xml.rels',
      'xl/styles.xml',
      'xl/workbook.xml',
      'xl/worksheets/sheet1.xml',
    ]);
    const { name, rows } = await readBack(file);
    expect(name).toBe('Activate Alarm');
    expect(rows).toEqual([
      ['Id', 'Date and Time', 'Name', 'Note'],
      [1, '2026-03-01T10:00:00.000Z', 'a<b & "c" \'d\' >'],
      [2.5, undefined, 'Ünïcødé ✓ 🙂', '  spaced  '],
      [3, 'tab\there\nnew line', 'bell and nul dropped', "'=1+2"],
    ]);
  });

  it('writes date-times as date cells, numbers as numbers and formula-looking text as inert strings', async () => {
    // 2030-06-15 15:50:30 as a wall clock (the export has moved it to the operator's zone already).
    const wallClock = Date.parse('2030-06-15T15:50:30.000Z');
    const file = await writeFile('Typed', [
      ['Id', 'When', 'User', 'Note'],
      [7, { wallClock }, '=HYPERLINK("http://x","y")', '+1-2'],
      [8, { wallClock: wallClock + 999 }, '@SUM(A1)', '-3'],
    ]);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(file as unknown as ArrayBuffer);
    const sheet = workbook.worksheets[0];
    const row = sheet?.getRow(2);
    expect(row?.getCell(1).type).toBe(ExcelJS.ValueType.Number);
    expect(row?.getCell(1).value).toBe(7);
    expect(row?.getCell(2).type).toBe(ExcelJS.ValueType.Date);
    expect(row?.getCell(2).numFmt).toBe('yyyy-mm-dd hh:mm:ss');
    expect(row?.getCell(2).value).toEqual(new Date('2030-06-15T15:50:30.000Z'));
    // Whole seconds, as the screen shows them.
    expect(sheet?.getRow(3).getCell(2).value).toEqual(new Date('2030-06-15T15:50:30.000Z'));
    for (const [cell, text] of [
      [row?.getCell(3), '=HYPERLINK("http://x","y")'],
      [row?.getCell(4), '+1-2'],
      [sheet?.getRow(3).getCell(3), '@SUM(A1)'],
    ] as const) {
      expect(cell?.type).toBe(ExcelJS.ValueType.String);
      expect(cell?.value).toBe(text);
      expect(cell?.formula).toBeUndefined();
    }
    // In the XML: a styled serial day number, and string cells with no formula element.
    const sheetXml = (await unzipped(file)).find((e) => e.name === 'xl/worksheets/sheet1.xml')?.text ?? '';
    expect(sheetXml).toContain(`<c r="B2" s="1"><v>${excelSerial(wallClock)}</v></c>`);
    expect(excelSerial(Date.parse('1970-01-01T00:00:00.000Z'))).toBe(25_569);
    expect(excelSerial(Date.parse('2030-06-15T12:00:00.000Z'))).toBe(47_649.5);
    expect(sheetXml).not.toContain('<f>');
    expect(sheetXml).toContain(
      '<c r="C2" t="inlineStr"><is><t>=HYPERLINK(&quot;http://x&quot;,&quot;y&quot;)</t></is></c>',
    );
  });

  it('keeps every row in order through a slow reader, past column Z', async () => {
    const width = 30;
    const header = Array.from({ length: width }, (_, i) => `Column ${i + 1}`);
    const rows: XlsxCell[][] = [header];
    for (let r = 1; r <= 20_000; r++)
      rows.push(Array.from({ length: width }, (_, c) => (c % 2 === 0 ? r * 100 + c : `r${r}c${c}`)));
    const file = await writeFile('Big', rows, 50);
    const back = await readBack(file);
    expect(back.rows).toHaveLength(rows.length);
    expect(back.rows[0]).toEqual(header);
    expect(back.rows[1]?.[26]).toBe(126); // AA1's neighbour row: column 27 is AA
    expect(back.rows[20_000]).toEqual(rows[20_000]);
    expect(back.rows.every((row, i) => row.length === width && row[0] === rows[i]?.[0])).toBe(true);
  });

  it('stops waiting when its reader goes away halfway', async () => {
    const output = new PassThrough({ highWaterMark: 1024 });
    const writer = xlsxWriter(output, 'Gone', { zlibLevel: 1 });
    let written = 0;
    // Nobody reads: the compressor and the output fill up, then the reader is gone.
    setTimeout(() => output.destroy(), 50);
    for (let r = 0; r < 200_000 && !output.destroyed; r++) {
      const full = writer.addRow([r, `row ${r} ${'x'.repeat(50)}`]);
      written++;
      if (full) await full;
    }
    expect(output.destroyed).toBe(true);
    expect(written).toBeLessThan(200_000);
  });

  it('makes a zip a separate reader opens: every entry deflated, its CRC and sizes right', async () => {
    const rows: XlsxCell[][] = [['Id', 'Name']];
    for (let r = 1; r <= 5000; r++) rows.push([r, `name ${r}`]);
    const file = await writeFile('Checked', rows);
    const entries = await unzipped(file);
    expect(entries.map((e) => e.name)).toEqual([
      '[Content_Types].xml',
      '_rels/.rels',
      'docProps/app.xml',
      'docProps/core.xml',
      'xl/workbook.xml',
      'xl/_rels/workbook.xml.rels',
      'xl/styles.xml',
      'xl/worksheets/sheet1.xml',
    ]);
    const sheet = entries.find((e) => e.name === 'xl/worksheets/sheet1.xml');
    expect(sheet?.size).toBe(Buffer.byteLength(sheet?.text ?? ''));
    expect(sheet?.text).toContain(
      '<c r="B5001" t="inlineStr"><is><t>name 5000</t></is></c></row></sheetData>',
    );
    expect(entries.find((e) => e.name === 'xl/workbook.xml')?.text).toContain(
      '<sheet name="Checked" sheetId="1" r:id="rId2"/>',
    );
    // Deflated: the file is much smaller than the text it holds.
    expect(file.length).toBeLessThan(entries.reduce((sum, e) => sum + e.size, 0) / 3);
  });

  it('writes a workbook of several sheets, each read back under its name with its rows', async () => {
    const output = new PassThrough();
    const chunks: Buffer[] = [];
    output.on('data', (chunk: Buffer) => chunks.push(chunk));
    await writeXlsx(output, [
      {
        name: 'Registration Details',
        rows: [
          ['IMEI 1', 'Brand'],
          ['356938035643809', 'Samsung'],
        ],
      },
      { name: 'Released Details', rows: [['IMEI 1', 'Released By']] },
      {
        name: 'De-enroll & Re-registration',
        rows: [
          ['IMEI 1', 'Action'],
          ['356938035643809', 'DEENROLL'],
        ],
      },
    ]);
    const file = Buffer.concat(chunks);
    const names = (await unzipped(file)).map((e) => e.name);
    expect(names.filter((n) => n.startsWith('xl/worksheets/'))).toEqual([
      'xl/worksheets/sheet1.xml',
      'xl/worksheets/sheet2.xml',
      'xl/worksheets/sheet3.xml',
    ]);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(file as unknown as ArrayBuffer);
    const sheets = workbook.worksheets.map((sheet) => {
      const rows: unknown[][] = [];
      sheet.eachRow((row) => rows.push((row.values as unknown[]).slice(1)));
      return { name: sheet.name, rows };
    });
    expect(sheets).toEqual([
      {
        name: 'Registration Details',
        rows: [
          ['IMEI 1', 'Brand'],
          ['356938035643809', 'Samsung'],
        ],
      },
      { name: 'Released Details', rows: [['IMEI 1', 'Released By']] },
      {
        name: 'De-enroll & Re-registration',
        rows: [
          ['IMEI 1', 'Action'],
          ['356938035643809', 'DEENROLL'],
        ],
      },
    ]);
    expect(() => xlsxWriter(new PassThrough(), ['Same', 'same'])).toThrow('Sheet names must differ');
  });

  it('names sheets as Excel allows and escapes XML text', () => {
    expect(sheetName('Registration Status / Unmatched: [all]?')).toBe('Registration Status - Unmatched');
    expect(sheetName('')).toBe('Sheet1');
    expect(xmlText('plain')).toBe('plain');
    expect(xmlText('<a href="x">&\'</a>\u0001')).toBe('&lt;a href=&quot;x&quot;&gt;&amp;&apos;&lt;/a&gt;');
  });
});
